import { QueryTypes } from 'sequelize';
import { claimFairly } from '../../db/repositories/dispatch-queue';
import { DISPATCH_LEASE_MS } from '../../workers/dispatcher';
import { type CountingSink, startCountingSink } from '../faults/counting-sink';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { until } from '../helpers/polling';

/**
 * Recovery after a provider outage (docs/delivery.md "When a provider fails"): the email route's breaker,
 * retries from the outbox, the give-up rule and the dispatcher's short lease, against the real send path
 * with a relay that can refuse connections and greylist a recipient.
 */
let relay: CountingSink;
let stack: EmailStack;
beforeAll(async () => {
  relay = await startCountingSink();
  stack = await startEmailStack({
    overrides: {
      SMTP_URL: relay.url,
      PROVIDER_BREAKER_THRESHOLD: '3',
      PROVIDER_PROBE_INTERVAL_MS: '500',
      SEND_RETRY_INITIAL_MS: '2000',
    },
  });
});
afterAll(async () => {
  await stack.close();
  await relay.close();
});

jest.setTimeout(120_000);

const db = () => stack.api.db;

interface Row { id: string; status: string; dispatched: boolean; redispatches: number; send_retries: number; next_attempt_at: Date | null }
const rowsOf = (ids: string[]) => db().query<Row>(
  'SELECT id, status, dispatched_at IS NOT NULL AS dispatched, redispatches, send_retries, next_attempt_at FROM messages WHERE id = ANY ($1::uuid[])',
  { bind: [ids], type: QueryTypes.SELECT },
);
const breaker = async (route: string) =>
  (await db().query<{ state: string; failures: number }>('SELECT state, failures FROM provider_breakers WHERE route = $1', { bind: [route], type: QueryTypes.SELECT }))[0] ?? null;
const eventsOf = (id: string) =>
  db().query<{ type: string; reason: string | null }>('SELECT type, reason FROM message_events WHERE message_id = $1 ORDER BY created_at', { bind: [id], type: QueryTypes.SELECT });

describe('a provider outage', () => {
  it('connection failures open the email route: its messages wait in the outbox with only probes going out, and the first probe after the relay is back closes it and sends each once', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack, { domain: true });
    await relay.setMode('down');
    const ids = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 20, from: `a@${domain}`, toPrefix: 'outage' });

    await until('the email route opens', () => breaker('email:smtp'), (row) => row?.state === 'open');
    // The attempts in flight when it opened hand their messages back; then only probes go out.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const before = await rowsOf(ids);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = await rowsOf(ids);
    const dispatches = (rows: Row[]) => rows.reduce((sum, row) => sum + row.redispatches, 0);
    // One probe per 500 ms at most: 3 s → at most 7 dispatches, not one per message per round.
    expect(dispatches(after) - dispatches(before)).toBeLessThanOrEqual(7);
    // Waiting messages hold no in-flight slot: only probes are dispatched (one per 500 ms; on a busy machine a
    // probe's trip can outlast the interval, so two or three overlap), never the 20 of them.
    expect(after.filter((row) => row.dispatched).length).toBeLessThanOrEqual(3);
    expect(after.every((row) => row.status === 'queued' || row.status === 'sending')).toBe(true);

    await relay.setMode('accept');
    const back = Date.now();
    await until('a first delivery', async () => relay.deliveredTotal(), (total) => total > 0, 10_000);
    expect(Date.now() - back).toBeLessThan(5_000);
    await until('every message sent', () => rowsOf(ids), (rows) => rows.every((row) => row.status === 'sent'), 30_000);
    expect(await breaker('email:smtp')).toMatchObject({ state: 'closed', failures: 0 });
    for (const id of ids) expect(relay.deliveries.get(id)).toBe(1);
  });

  it('a message still waiting past the retry deadline while its route is down ends failed, with its failed event', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack, { domain: true });
    await relay.setMode('down');
    try {
      const [probe] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'probe' });
      await until('the email route opens', () => breaker('email:smtp'), (row) => row?.state === 'open', 60_000);
      const [old] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'old' });
      // Accepted two days ago: past the default one-day deadline, and the route stays down.
      await db().query("UPDATE messages SET created_at = now() - interval '2 days' WHERE id = ANY ($1::uuid[])", { bind: [[old, probe]] });
      expect(await stack.waitForStatus(workspaceId, old, ['failed', 'sent'], 90_000)).toBe('failed');
      expect((await eventsOf(old)).find((event) => event.type === 'failed')?.reason).toMatch(/provider stayed unavailable|not accepted by the provider/);
    } finally {
      await relay.setMode('accept');
    }
    // The next message goes as a probe and closes the route for the tests after this one.
    const [next] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'next' });
    expect(await stack.waitForStatus(workspaceId, next, ['sent', 'failed'])).toBe('sent');
    // The attempt records the message sent first, then closes the route (activities/delivery.ts).
    await until('the email route closes', () => breaker('email:smtp'), (row) => row?.state === 'closed', 10_000);
  });
});

describe('a failure of one message', () => {
  it('a greylisted recipient is retried from the outbox after its backoff, holding no in-flight slot meanwhile, and does not open the route', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack, { domain: true });
    relay.greylist('grey-0@example.org', 1);
    const [id] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'grey' });

    const waiting = await until('handed back after the 450', async () => (await rowsOf([id]))[0], (row) => row.send_retries === 1);
    expect(waiting).toMatchObject({ status: 'queued', dispatched: false });
    const handedBackAt = Date.now();
    // 2 s ± 20% from the hand-back.
    expect(waiting.next_attempt_at!.getTime() - handedBackAt).toBeGreaterThan(1_000);

    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    expect(Date.now() - handedBackAt).toBeGreaterThan(1_000);
    expect(relay.deliveries.get(id)).toBe(1);
    expect((await breaker('email:smtp'))?.state ?? 'closed').toBe('closed');
  });

  it('a message that fails transiently past the retry deadline ends failed with its failed event', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack, { domain: true });
    relay.greylist('late-0@example.org', 5);
    await stack.stopDispatcher();
    const [id] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'late' });
    await db().query("UPDATE messages SET created_at = now() - interval '2 days' WHERE id = $1", { bind: [id] });
    stack.startDispatcher();

    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
    const failed = (await eventsOf(id)).find((event) => event.type === 'failed');
    expect(failed?.reason).toMatch(/450 greylisted/);
  });
});

describe('the dispatcher lease', () => {
  it('rows a dispatcher claimed before it died are dispatched by another within seconds', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack, { domain: true });
    await stack.stopDispatcher();
    const [id] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'lease' });
    // A dispatcher claims the row and dies before starting its workflow.
    const claimed = await claimFairly(db(), { channel: 'email', dispatchClass: 'transactional', bound: 100, leaseMs: DISPATCH_LEASE_MS });
    expect(claimed.map((message) => message.messageId)).toContain(id);
    const died = Date.now();

    stack.startDispatcher();
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    expect(Date.now() - died).toBeLessThan(10_000);
  });
});
