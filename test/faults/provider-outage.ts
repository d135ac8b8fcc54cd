import { QueryTypes } from 'sequelize';
import { queueMessages } from '../helpers/factories';
import { sleep, waitFor } from './processes';
import type { Scenario, ScenarioContext } from './scenarios';

/**
 * "The provider down while two workspaces send" (issue 30, docs/reliability.md): one workspace with a backlog
 * of a couple of thousand transactional emails, another quiet one sending a single email during the outage.
 * The outage lasts FAULTS_PROVIDER_OUTAGE_SECONDS (default 120, what CI time allows; run once with 600).
 * On recovery the first delivery must come within 5 s and the quiet workspace's email within 10 s.
 */
const BACKLOG = 2_000;
const FIRST_DELIVERY_BOUND_S = 5;
const QUIET_BOUND_S = 10;
/**
 * How long the backlog (2,000 plus what the load sent meanwhile) may take to drain after the quiet email: a
 * bound, not a target. A 600 s outage run on the loaded shared machine drained at 3-6 sends/s and needed more
 * than 300 s; the invariants hold either way.
 */
const DRAIN_BOUND_MS = 600_000;

const outageMs = () => Number(process.env.FAULTS_PROVIDER_OUTAGE_SECONDS ?? '120') * 1000;

/** The quiet workspace's one email, through the API like any client's. */
async function sendOne(context: ScenarioContext, apiKey: string, domain: string): Promise<string> {
  const response = await fetch(`${context.app.apiUrl}/api/v1/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: `Quiet <quiet@${domain}>`, to: 'quiet@example.org', subject: 'During the outage', text: 'Hello', idempotencyKey: `quiet-${Date.now()}` }),
  });
  const body = (await response.json()) as { id?: string };
  if (response.status !== 202 || !body.id) throw new Error(`the quiet workspace's email was answered ${response.status}`);
  return body.id;
}

/** Where the backlog stands: every message must end sent and reach the provider exactly once. */
async function backlogViolations(context: ScenarioContext, ids: string[]): Promise<string[]> {
  const rows = await context.db.query<{ id: string; status: string }>('SELECT id, status FROM messages WHERE id = ANY ($1::uuid[])', {
    bind: [ids],
    type: QueryTypes.SELECT,
  });
  const notSent = rows.filter((row) => row.status !== 'sent');
  const lost = rows.filter((row) => !context.sink.deliveries.has(row.id));
  const twice = rows.filter((row) => (context.sink.deliveries.get(row.id) ?? 0) > 1);
  return [
    ...(notSent.length ? [`${notSent.length} backlog messages not sent (${notSent.slice(0, 3).map((row) => `${row.id}=${row.status}`).join(', ')})`] : []),
    ...(lost.length ? [`${lost.length} backlog messages never reached the provider`] : []),
    ...(twice.length ? [`${twice.length} backlog messages reached the provider more than once`] : []),
  ];
}

export const providerOutage: Scenario = {
  name: 'provider-outage',
  fault: 'the provider down (connections refused) for FAULTS_PROVIDER_OUTAGE_SECONDS (default 120) while one workspace has 2,000 emails queued and another sends one',
  proves: 'an outage is noticed once (the email route\'s breaker), messages wait in the outbox rather than in retry timers, and on recovery the first delivery comes within 5 s and the quiet workspace\'s email within 10 s; nothing lost or sent twice',
  // A light load beside the backlog: everything accepted during a 10-minute outage must drain within the
  // suite's bounds afterwards, on a machine that sends 10-25 transactional emails a second.
  load: { clients: 1, pauseMs: 1_000 },
  async run(context) {
    const deliveredBefore = context.sink.lastDeliveryAt();
    await waitFor('deliveries under load', () => context.sink.lastDeliveryAt() > deliveredBefore, 60_000);
    const busy = await context.sender('faults provider-outage backlog');
    const quiet = await context.sender('faults provider-outage quiet');
    const down = Date.now();
    await context.sink.setMode('down');
    const backlog = await queueMessages(context.db, busy.workspaceId, { kind: 'transactional', count: BACKLOG, from: `backlog@${busy.domain}`, toPrefix: 'backlog' });
    await sleep(Math.min(10_000, outageMs() / 4));
    const quietId = await sendOne(context, quiet.apiKey, quiet.domain);
    await sleep(Math.max(0, outageMs() - (Date.now() - down)));

    const back = Date.now();
    await context.sink.setMode('accept');
    const violations: string[] = [];
    const first = await waitFor('a delivery after the outage', () => context.sink.lastDeliveryAt() > back, 180_000, 50).then(() => (context.sink.lastDeliveryAt() - back) / 1000);
    await waitFor('the quiet workspace\'s email', () => context.sink.deliveries.has(quietId), 180_000, 50);
    const quietSeconds = (Date.now() - back) / 1000;
    console.log(`faults: provider-outage: ${outageMs() / 1000} s down; first delivery ${first.toFixed(1)} s after, the quiet workspace's email ${quietSeconds.toFixed(1)} s after`);
    if (first > FIRST_DELIVERY_BOUND_S) violations.push(`the first delivery came ${first.toFixed(1)} s after the provider was back (bound ${FIRST_DELIVERY_BOUND_S} s)`);
    if (quietSeconds > QUIET_BOUND_S) violations.push(`the quiet workspace's email came ${quietSeconds.toFixed(1)} s after the provider was back (bound ${QUIET_BOUND_S} s)`);
    const drained = Date.now();
    await waitFor('the backlog drained', async () => (await backlogViolations(context, backlog)).length === 0, DRAIN_BOUND_MS, 1_000).catch(() => undefined);
    console.log(`faults: provider-outage: the ${BACKLOG} backlog drained ${((Date.now() - drained) / 1000).toFixed(1)} s after the quiet email`);
    violations.push(...(await backlogViolations(context, backlog)));
    if ((context.sink.deliveries.get(quietId) ?? 0) !== 1) violations.push('the quiet workspace\'s email reached the provider more than once');
    return { recoverySeconds: first, violations };
  },
};
