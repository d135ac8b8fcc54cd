import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { createProviderEventActivities, type MatchParkedInput, type MatchParkedResult, type ProviderEventActivities } from '../../activities/provider-events';
import { listMessageEvents } from '../../db/repositories/message-events';
import { recordSent } from '../../db/repositories/message-delivery';
import { PARKED_EVENT_LIFETIME_MS, replayParkedEvents, type Suppress } from '../../db/repositories/provider-events';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { type FakeSns, startFakeSns } from '../helpers/fake-sns';

/**
 * SES notifications that arrive before their message's provider id is recorded, and notifications whose
 * recipients are not the message's. The API runs alone (outbox dispatch, no worker): messages stay queued
 * and each test records the provider's answer itself with `recordSent`, as the delivery activity does, so
 * the order of notification and answer is the test's to choose.
 */
let api: ApiHarness;
let sns: FakeSns;
beforeAll(async () => {
  sns = await startFakeSns();
  api = await startApi({ EMAIL_PROVIDER: 'ses', SNS_TOPIC_ARNS: sns.topicArn, RATE_LIMIT_PER_SECOND: '1000' }, { snsAgent: sns.agent });
});
afterAll(async () => {
  await api?.close();
  await sns?.close();
});

const notify = (body: string) => fetch(`${api.url}/callbacks/ses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
const suppress: Suppress = (workspaceId, addresses, reason, transaction) =>
  suppressAddresses(api.db, workspaceId, 'email', addresses, reason, transaction).then(() => undefined);
/** The sweep activity as a worker runs it (with an activity context), one page of 100. */
const sweep = () =>
  new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run<[MatchParkedInput], MatchParkedResult, ProviderEventActivities['matchParkedProviderEvents']>(
    createProviderEventActivities(api.db).matchParkedProviderEvents,
    { limit: 100 },
  );

/** A queued message of a fresh workspace, accepted by the API; nothing sends it. */
async function acceptedMessage(recipients: { to: string | string[]; cc?: string[]; bcc?: string[] }) {
  const workspace = await createTestWorkspace(api, { domain: true });
  const { domain } = workspace;
  const response = await api.call('POST', '/api/v1/emails', {
    key: workspace.apiKey,
    body: { from: `a@${domain}`, ...recipients, subject: 'S', text: 'T', idempotencyKey: `k-${randomUUID()}` },
  });
  expect(response.status).toBe(202);
  return { ...workspace, id: (response.body as { id: string }).id };
}

const hardBounce = (sesId: string, ...addresses: string[]) =>
  sns.notification({
    notificationType: 'Bounce',
    mail: { messageId: sesId },
    bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: addresses.map((emailAddress) => ({ emailAddress })) },
  });

const parkedFor = async (sesId: string) =>
  api.db.query<{ notification_id: string }>("SELECT notification_id FROM parked_provider_events WHERE provider = 'ses' AND provider_message_id = $1", {
    bind: [sesId],
    type: QueryTypes.SELECT,
  });

const suppressed = async (workspaceId: string) =>
  (
    await api.db.query<{ address: string; reason: string }>('SELECT address, reason FROM suppressions WHERE workspace_id = $1 ORDER BY address', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    })
  ).map((row) => `${row.address} ${row.reason}`);

const messageState = async (workspaceId: string, id: string) => {
  const [row] = await api.db.query<{ status: string; bounced: boolean }>('SELECT status, bounced FROM messages WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, id],
    type: QueryTypes.SELECT,
  });
  const events = await listMessageEvents(api.db, workspaceId, id);
  return { status: row.status, bounced: row.bounced, events: events.map((event) => event.type) };
};

describe('SES notifications for a message not known yet', () => {
  it('a bounce that arrives before the provider id is recorded is parked (200 to SNS); the sweep then records it exactly once', async () => {
    const message = await acceptedMessage({ to: 'late@example.org' });
    const sesId = `ses-${randomUUID()}`;
    expect((await notify(hardBounce(sesId, 'late@example.org'))).status).toBe(200);
    expect(await parkedFor(sesId)).toHaveLength(1);
    expect(await suppressed(message.workspaceId)).toEqual([]);

    // The delivery activity records SES's answer only now (it crashed, or SES was faster than our commit).
    await recordSent(api.db, message.workspaceId, [{ messageId: message.id, provider: 'ses', providerMessageId: sesId }]);
    expect((await sweep()).recorded).toBeGreaterThanOrEqual(1);
    expect(await messageState(message.workspaceId, message.id)).toEqual({ status: 'bounced', bounced: true, events: ['sent', 'bounce'] });
    expect(await suppressed(message.workspaceId)).toEqual(['late@example.org hard_bounce']);
    expect(await parkedFor(sesId)).toEqual([]);

    // Run again (a second worker, the next period): nothing more is recorded.
    await sweep();
    expect((await messageState(message.workspaceId, message.id)).events).toEqual(['sent', 'bounce']);
  });

  it('replayParkedEvents, called once the provider id is recorded, records what was parked for it at once', async () => {
    const message = await acceptedMessage({ to: 'quick@example.org' });
    const sesId = `ses-${randomUUID()}`;
    const delivery = sns.notification({ notificationType: 'Delivery', mail: { messageId: sesId }, delivery: { recipients: ['quick@example.org'] } });
    expect((await notify(delivery)).status).toBe(200);
    // SNS redelivers the same notification: it is parked once.
    expect((await notify(delivery)).status).toBe(200);
    expect(await parkedFor(sesId)).toHaveLength(1);

    await recordSent(api.db, message.workspaceId, [{ messageId: message.id, provider: 'ses', providerMessageId: sesId }]);
    expect(await replayParkedEvents(api.db, suppress, 'ses', sesId)).toBe(1);
    expect(await messageState(message.workspaceId, message.id)).toMatchObject({ status: 'delivered', events: ['sent', 'delivered'] });
    expect(await parkedFor(sesId)).toEqual([]);
  });

  it('a parked event whose message never appears is dropped by the sweep after 7 days, and counted', async () => {
    const sesId = `ses-${randomUUID()}`;
    await notify(hardBounce(sesId, 'nobody@example.org'));
    const young = `ses-${randomUUID()}`;
    await notify(hardBounce(young, 'nobody@example.org'));
    await api.db.query("UPDATE parked_provider_events SET received_at = now() - make_interval(secs => $2 / 1000.0 + 60) WHERE provider_message_id = $1", {
      bind: [sesId, PARKED_EVENT_LIFETIME_MS],
    });
    expect((await sweep()).expired).toBeGreaterThanOrEqual(1);
    expect(await parkedFor(sesId)).toEqual([]);
    expect(await parkedFor(young)).toHaveLength(1);
  });
});

describe('bounce and complaint recipients are the message\'s own', () => {
  it('a bounce naming a recipient and a stranger suppresses only the recipient, whatever the case or display name', async () => {
    const message = await acceptedMessage({ to: 'Ann <Ann@Example.org>', cc: ['carl@example.org'], bcc: ['Bea@example.org'] });
    const sesId = `ses-${randomUUID()}`;
    await recordSent(api.db, message.workspaceId, [{ messageId: message.id, provider: 'ses', providerMessageId: sesId }]);
    expect((await notify(hardBounce(sesId, 'ann@example.org', 'BEA@EXAMPLE.ORG', 'ceo@victim.example'))).status).toBe(200);

    expect(await suppressed(message.workspaceId)).toEqual(['ann@example.org hard_bounce', 'bea@example.org hard_bounce']);
    const events = await api.db.query<{ type: string; data: object }>("SELECT type, data FROM message_events WHERE message_id = $1 AND type = 'bounce'", {
      bind: [message.id],
      type: QueryTypes.SELECT,
    });
    expect(events).toEqual([{ type: 'bounce', data: { recipients: ['ann@example.org', 'BEA@EXAMPLE.ORG'], ignoredRecipients: ['ceo@victim.example'] } }]);
  });

  it('a complaint naming none of the message\'s recipients changes nothing: no event, no status, no suppression', async () => {
    const message = await acceptedMessage({ to: ['ann@example.org'] });
    const sesId = `ses-${randomUUID()}`;
    await recordSent(api.db, message.workspaceId, [{ messageId: message.id, provider: 'ses', providerMessageId: sesId }]);
    const complaint = sns.notification({ notificationType: 'Complaint', mail: { messageId: sesId }, complaint: { complainedRecipients: [{ emailAddress: 'ceo@victim.example' }] } });
    expect((await notify(complaint)).status).toBe(200);

    expect(await messageState(message.workspaceId, message.id)).toEqual({ status: 'sent', bounced: false, events: ['sent'] });
    expect(await suppressed(message.workspaceId)).toEqual([]);
    expect(await parkedFor(sesId)).toEqual([]);
  });
});

describe('SNS topics', () => {
  it('a correctly signed notification from a topic not in SNS_TOPIC_ARNS is refused with 403 and changes nothing', async () => {
    const message = await acceptedMessage({ to: 'ann@example.org' });
    const sesId = `ses-${randomUUID()}`;
    await recordSent(api.db, message.workspaceId, [{ messageId: message.id, provider: 'ses', providerMessageId: sesId }]);
    const foreign = sns.notification(
      { notificationType: 'Complaint', mail: { messageId: sesId }, complaint: { complainedRecipients: [{ emailAddress: 'ann@example.org' }] } },
      { topicArn: 'arn:aws:sns:us-east-1:999999999999:someone-elses-topic' },
    );
    const response = await notify(foreign);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'forbidden', need: 'SNS_TOPIC_ARNS' });
    expect(await messageState(message.workspaceId, message.id)).toMatchObject({ status: 'sent', events: ['sent'] });
  });
});

describe('SNS topics when none is configured (an SMTP deployment)', () => {
  let smtpApi: ApiHarness;
  beforeAll(async () => {
    smtpApi = await startApi({ EMAIL_PROVIDER: 'smtp', SNS_TOPIC_ARNS: '' }, { snsAgent: sns.agent });
  });
  afterAll(() => smtpApi?.close());

  it('every topic is refused, outside production too', async () => {
    expect(smtpApi.config.NODE_ENV).not.toBe('production');
    const body = sns.notification({ notificationType: 'Delivery', mail: { messageId: `ses-${randomUUID()}` }, delivery: { recipients: [] } });
    const response = await fetch(`${smtpApi.url}/callbacks/ses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    expect(response.status).toBe(403);
  });
});
