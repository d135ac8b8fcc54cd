import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { Worker } from '@temporalio/worker';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createJourneyActivities } from '../../activities/journeys';
import type { Channel } from '../../core/identities';
import type { JourneyGraph, JourneyNode } from '../../core/journeys/graph';
import { nextLocalTime } from '../../core/journeys/local-time';
import { recordInbound } from '../../db/repositories/whatsapp';
import { enrollmentWorkflowId } from '../../core/ids';
import { journeyWorkflow } from '../../workflows/journey';
import { startEnrollmentWorkflow } from '../../temporal/journeys';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { workflowBundle } from '../../workers/workflow-bundle';

// The journey runtime against the real database: its activities, and the journey workflow run by the
// time-skipping server with those activities (they take the time from the workflow, so skipped days count).
jest.setTimeout(120_000);

const DAY = 24 * 60 * 60_000;

let api: ApiHarness;
let env: TimeSkippingEnv;
beforeAll(async () => {
  api = await startApi();
  env = await startTimeSkipping();
});
// The messages written here are queued: the workspaces go at the end, so no dispatcher of another test sends them.
const workspaces: string[] = [];
afterAll(async () => {
  await api.db.query('DELETE FROM workspaces WHERE id = ANY($1::uuid[])', { bind: [workspaces] });
  await env.close();
  await api.close();
});

const activities = () => createJourneyActivities({ db: api.db });

interface Journey {
  workspaceId: string;
  apiKey: string;
  automationId: string;
  contactId: string;
  enrollmentId: string;
  templates: Record<Channel, string>;
}

async function insertTemplate(db: Sequelize, workspaceId: string, channels: Channel[]): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO templates (id, workspace_id, name, current_version) VALUES ($1, $2, $3, 1)`, { bind: [id, workspaceId, `t-${id}`] });
  await db.query(
    `INSERT INTO template_versions (id, workspace_id, template_id, version, channels, format, subject, body, channel_text, variables)
     VALUES ($1, $2, $3, 1, $4, 'html', 'Hello', '<p>Hello {{contact.firstName}}</p>', NULL, '{}')`,
    { bind: [randomUUID(), workspaceId, id, channels] },
  );
  return id;
}

/**
 * A workspace with a verified domain (and its default sender), a template per channel, a contact with
 * the identities given (primary, verified, opted in), an automation with one published version of the
 * graph, and the contact's active enrollment in it.
 */
async function journey(
  graph: (templates: Record<Channel, string>) => JourneyGraph,
  contact: { attributes?: Record<string, unknown>; identities: Array<[Channel, string]> },
  options: { sender?: boolean; harness?: ApiHarness } = {},
): Promise<Journey> {
  const harness = options.harness ?? api;
  const { db } = harness;
  const workspace = await createTestWorkspace(db);
  const { workspaceId } = workspace;
  if (harness === api) workspaces.push(workspaceId);
  const domain = (await addTestDomain(db, workspaceId, { masterKey: harness.config.MASTER_KEY })).domain;
  if (options.sender !== false) await db.query(`UPDATE domains SET default_from_address = $3, default_from_name = 'News' WHERE workspace_id = $1 AND name = $2`, {
    bind: [workspaceId, domain, `news@${domain}`],
  });
  const templates = {
    email: await insertTemplate(db, workspaceId, ['email']),
    whatsapp: await insertTemplate(db, workspaceId, ['whatsapp']),
    telegram: await insertTemplate(db, workspaceId, ['telegram']),
  };
  const contactId = randomUUID();
  await db.query('INSERT INTO contacts (id, workspace_id, attributes) VALUES ($1, $2, $3::jsonb)', {
    bind: [contactId, workspaceId, JSON.stringify({ firstName: 'Ann', ...contact.attributes })],
  });
  for (const [channel, address] of contact.identities) {
    await db.query(
      `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, verified, is_primary) VALUES ($1, $2, $3, $4, 'opted_in', true, true)`,
      { bind: [workspaceId, channel, address, contactId] },
    );
  }
  const automationId = randomUUID();
  const versionId = randomUUID();
  const published = graph(templates);
  await db.query(
    `INSERT INTO automations (id, workspace_id, name, status, draft, draft_version_id, current_version_id) VALUES ($1, $2, 'Welcome series', 'active', $3::jsonb, $4, $4)`,
    { bind: [automationId, workspaceId, JSON.stringify({ triggers: [], goal: null, graph: published }), versionId] },
  );
  await db.query(`INSERT INTO automation_versions (id, workspace_id, automation_id, version, graph) VALUES ($1, $2, $3, 1, $4::jsonb)`, {
    bind: [versionId, workspaceId, automationId, JSON.stringify(published)],
  });
  const enrollmentId = randomUUID();
  await db.query(`INSERT INTO enrollments (id, workspace_id, automation_id, version_id, contact_id, source) VALUES ($1, $2, $3, $4, $5, 'contacts')`, {
    bind: [enrollmentId, workspaceId, automationId, versionId, contactId],
  });
  return { workspaceId, apiKey: workspace.apiKey, automationId, contactId, enrollmentId, templates };
}

const emailMessage = (id: string, templates: Record<Channel, string>, next: string | null): JourneyNode => ({
  id, type: 'message', preferredChannel: 'email', fallbackChain: [], templateByChannel: { email: templates.email }, attachmentIds: [], next,
});

interface MessageRow {
  id: string;
  kind: string;
  channel: Channel;
  status: string;
  to_addresses: string[];
  from_address: string | null;
  content: Record<string, unknown>;
  enrollment_id: string;
  automation_id: string;
  journey_node_id: string;
  idempotency_key: string;
  created_at: Date;
}

async function messagesOf(journeyOf: Journey): Promise<MessageRow[]> {
  return api.db.query<MessageRow>(`SELECT * FROM messages WHERE workspace_id = $1 ORDER BY created_at`, {
    bind: [journeyOf.workspaceId],
    type: QueryTypes.SELECT,
  });
}

async function enrollmentOf(journeyOf: Journey) {
  const [row] = await api.db.query<{ status: string; exit_reason: string | null; current_node_id: string | null; current_node_label: string | null; started_at: Date | null }>(
    'SELECT status, exit_reason, current_node_id, current_node_label, started_at FROM enrollments WHERE id = $1',
    { bind: [journeyOf.enrollmentId], type: QueryTypes.SELECT },
  );
  return row;
}

async function runJourney(journeyOf: Journey) {
  const taskQueue = `${env.taskQueue}-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: activities() });
  return worker.runUntil(async () => {
    const handle = await env.workflowClient.start(journeyWorkflow, {
      taskQueue,
      workflowId: `enrollment:${journeyOf.enrollmentId}`,
      args: [{ workspaceId: journeyOf.workspaceId, enrollmentId: journeyOf.enrollmentId }],
    });
    return handle.result();
  });
}

describe('journey messages in time', () => {
  it('quiet hours 21:00–08:00 and a contact in Asia/Tokyo: a message due at 23:00 Tokyo is queued at 08:00 Tokyo', async () => {
    const dueAt = nextLocalTime(await env.now(), 'Asia/Tokyo', '23:00');
    const subject = await journey(
      (templates) => ({ entry: 'late', nodes: [{ id: 'late', type: 'wait', until: dueAt.toISOString(), next: 'hello' }, emailMessage('hello', templates, null)] }),
      { attributes: { timezone: 'Asia/Tokyo' }, identities: [['email', 'ann@example.org']] },
    );
    const put = await api.as(subject.apiKey)('PUT', '/automation-settings', { quietHours: { start: '21:00', end: '08:00' }, timezone: 'Europe/Paris' });
    expect(put.status).toBe(200);

    expect(await runJourney(subject)).toEqual({ status: 'completed', reason: 'completed' });
    const [sent] = await messagesOf(subject);
    const morning = nextLocalTime(dueAt, 'Asia/Tokyo', '08:00');
    expect(new Date(sent.created_at).getTime()).toBeGreaterThanOrEqual(morning.getTime());
    expect(new Date(sent.created_at).getTime()).toBeLessThan(morning.getTime() + 60_000);
    expect(await enrollmentOf(subject)).toMatchObject({ status: 'completed', exit_reason: 'completed', current_node_id: 'hello' });
  });

  it('a frequency cap of 1 a day delays the second journey message by a day', async () => {
    const subject = await journey(
      (templates) => ({ entry: 'first', nodes: [emailMessage('first', templates, 'second'), emailMessage('second', templates, null)] }),
      { identities: [['email', 'bob@example.org']] },
    );
    const put = await api.as(subject.apiKey)('PUT', '/automation-settings', { frequencyCaps: [{ channel: 'email', limit: 1, window: 'P1D' }] });
    expect(put.body).toMatchObject({ frequencyCaps: [{ channel: 'email', limit: 1, windowSeconds: 86_400 }] });

    expect(await runJourney(subject)).toEqual({ status: 'completed', reason: 'completed' });
    const [first, second] = await messagesOf(subject);
    expect([first.journey_node_id, second.journey_node_id]).toEqual(['first', 'second']);
    const gap = new Date(second.created_at).getTime() - new Date(first.created_at).getTime();
    expect(gap).toBeGreaterThanOrEqual(DAY);
    expect(gap).toBeLessThan(DAY + 60_000);
  });
});

describe('the journey message', () => {
  const chain = (templates: Record<Channel, string>): JourneyGraph => ({
    entry: 'hello',
    nodes: [{
      id: 'hello', type: 'message', preferredChannel: 'whatsapp', fallbackChain: ['telegram', 'email'], templateByChannel: templates, attachmentIds: [], next: null,
    }],
  });

  it('goes on the first channel the contact can be reached on; the rest of the chain are its fallback steps', async () => {
    const subject = await journey(chain, { identities: [['email', 'cy@example.org'], ['telegram', '123456']] });
    const outcome = await activities().enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', new Date().toISOString());
    expect(outcome).toMatchObject({ state: 'queued', channel: 'telegram' });
    const [row] = await messagesOf(subject);
    expect(row).toMatchObject({
      kind: 'automation', channel: 'telegram', status: 'queued', to_addresses: ['123456'], enrollment_id: subject.enrollmentId,
      automation_id: subject.automationId, journey_node_id: 'hello', idempotency_key: `automation:${subject.enrollmentId}:hello`,
    });
    expect(row.content).toMatchObject({ variables: { contact: { firstName: 'Ann', id: subject.contactId, email: 'cy@example.org' } } });
    expect(row.content.fallback).toEqual([
      expect.objectContaining({ channel: 'email', to: ['cy@example.org'], fromAddress: expect.stringContaining('News <news@'), templateId: subject.templates.email }),
    ]);
    expect((row.content.fallback as Array<{ content: Record<string, unknown> }>)[0].content).toMatchObject({ utmCampaign: 'Welcome series' });
  });

  it('a suppressed address is passed over for the next channel; with no channel left the node is skipped', async () => {
    const subject = await journey(chain, { identities: [['email', 'di@example.org'], ['telegram', '654321']] });
    await api.db.query(`INSERT INTO suppressions (workspace_id, channel, address, reason) VALUES ($1, 'telegram', '654321', 'unsubscribed')`, { bind: [subject.workspaceId] });
    expect(await activities().enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', new Date().toISOString())).toMatchObject({ state: 'queued', channel: 'email' });
    const [row] = await messagesOf(subject);
    expect(row).toMatchObject({ channel: 'email', to_addresses: ['di@example.org'], from_address: expect.stringContaining('news@') });
    expect(row.content).toMatchObject({ fallback: [], utmCampaign: 'Welcome series' });

    const nobody = await journey(chain, { identities: [] });
    expect(await activities().enqueueJourneyMessage(nobody.workspaceId, nobody.enrollmentId, 'hello', new Date().toISOString())).toEqual({ state: 'skipped', reason: 'no_reachable_identity' });
    expect(await messagesOf(nobody)).toEqual([]);
  });

  it('a skip is written down by the activity that decides it: once per enrollment and node, and counted once, however often the activity is retried', async () => {
    const nobody = await journey(chain, { identities: [] });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(await activities().enqueueJourneyMessage(nobody.workspaceId, nobody.enrollmentId, 'hello', new Date().toISOString())).toEqual({ state: 'skipped', reason: 'no_reachable_identity' });
    }
    const skips = await api.db.query('SELECT node_id, reason, node_label FROM journey_skips WHERE workspace_id = $1 AND enrollment_id = $2', {
      bind: [nobody.workspaceId, nobody.enrollmentId], type: QueryTypes.SELECT,
    });
    expect(skips).toEqual([{ node_id: 'hello', reason: 'no_reachable_identity', node_label: 'message' }]);
    const counts = await api.db.query('SELECT node_id, outcome, count FROM journey_node_counts WHERE workspace_id = $1 AND automation_id = $2', {
      bind: [nobody.workspaceId, nobody.automationId], type: QueryTypes.SELECT,
    });
    expect(counts).toEqual([{ node_id: 'hello', outcome: 'skipped:no_reachable_identity', count: '1' }]);
  });

  it('carries the node\'s ready attachments (a pending one is left out); email without any sender is skipped no_sender', async () => {
    const ready = randomUUID();
    const pending = randomUUID();
    const subject = await journey(
      (templates) => ({ entry: 'hello', nodes: [{ ...emailMessage('hello', templates, null), attachmentIds: [ready, pending] } as JourneyNode] }),
      { identities: [['email', 'hal@example.org']] },
    );
    for (const [id, status] of [[ready, 'ready'], [pending, 'pending']]) {
      await api.db.query(
        `INSERT INTO attachments (id, workspace_id, filename, content_type, size, status, origin, storage_key) VALUES ($1, $2, 'terms.pdf', 'application/pdf', 1234, $3, 'upload', $4)`,
        { bind: [id, subject.workspaceId, status, `test/${id}`] },
      );
    }
    expect(await activities().enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', new Date().toISOString())).toMatchObject({ state: 'queued', channel: 'email' });
    const [row] = await messagesOf(subject);
    expect(row.content.attachments).toEqual([{ id: ready, filename: 'terms.pdf', contentType: 'application/pdf', size: 1234 }]);

    const unsent = await journey((templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, null)] }), { identities: [['email', 'ida@example.org']] }, { sender: false });
    expect(await activities().enqueueJourneyMessage(unsent.workspaceId, unsent.enrollmentId, 'hello', new Date().toISOString())).toEqual({ state: 'skipped', reason: 'no_sender' });
    expect(await messagesOf(unsent)).toEqual([]);
  });

  it('a retried activity queues one message per node and reserves one quota unit', async () => {
    const subject = await journey((templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, null)] }), { identities: [['email', 'ed@example.org']] });
    const now = new Date().toISOString();
    const run = () => activities().enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', now);
    const outcomes = await Promise.all([run(), run(), run()]);
    outcomes.push(await run());
    const ids = new Set(outcomes.map((outcome) => (outcome.state === 'queued' ? outcome.messageId : outcome.state)));
    expect(ids.size).toBe(1);
    expect(await messagesOf(subject)).toHaveLength(1);
    const [usage] = await api.db.query<{ used: string }>('SELECT used FROM usage_counters WHERE workspace_id = $1', { bind: [subject.workspaceId], type: QueryTypes.SELECT });
    expect(Number(usage.used)).toBe(1);
  });

  it('a paused automation holds the message; an enrollment ended elsewhere is neither moved on nor ended again', async () => {
    const subject = await journey((templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, null)] }), { identities: [['email', 'fay@example.org']] });
    await api.db.query(`UPDATE automations SET status = 'paused' WHERE id = $1`, { bind: [subject.automationId] });
    const journeyActivities = activities();
    expect(await journeyActivities.enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', new Date().toISOString())).toEqual({ state: 'held' });
    expect(await messagesOf(subject)).toEqual([]);

    const node = { nodeId: 'hello', nodeType: 'message' as const, label: 'Hello' };
    expect(await journeyActivities.recordJourneyStep(subject.workspaceId, subject.enrollmentId, node, new Date().toISOString())).toBe(true);
    expect(await enrollmentOf(subject)).toMatchObject({ status: 'active', current_node_id: 'hello', current_node_label: 'Hello', started_at: expect.any(Date) });
    await api.db.query(`UPDATE enrollments SET status = 'exited', exit_reason = 'manual' WHERE id = $1`, { bind: [subject.enrollmentId] });
    expect(await journeyActivities.recordJourneyStep(subject.workspaceId, subject.enrollmentId, node, new Date().toISOString())).toBe(false);
    expect(await journeyActivities.finishEnrollment(subject.workspaceId, subject.enrollmentId, { status: 'exited', reason: 'goal_reached' })).toBe(false);
    expect(await enrollmentOf(subject)).toMatchObject({ status: 'exited', exit_reason: 'manual' });
  });

  it('a journey entering is loaded with its entry node recorded in one call; an enrollment ended before is loaded and not moved', async () => {
    const subject = await journey((templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, null)] }), { identities: [['email', 'gil@example.org']] });
    const entered = await activities().enterJourney(subject.workspaceId, subject.enrollmentId, new Date().toISOString());
    expect(entered).toMatchObject({ status: 'active', entered: true, graph: { entry: 'hello' } });
    expect(await enrollmentOf(subject)).toMatchObject({ status: 'active', current_node_id: 'hello', current_node_label: 'message', started_at: expect.any(Date) });

    const ended = await journey((templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, null)] }), { identities: [['email', 'hal@example.org']] });
    await api.db.query(`UPDATE enrollments SET status = 'exited', exit_reason = 'manual' WHERE id = $1`, { bind: [ended.enrollmentId] });
    expect(await activities().enterJourney(ended.workspaceId, ended.enrollmentId, new Date().toISOString())).toMatchObject({ status: 'exited', entered: false });
    expect(await enrollmentOf(ended)).toMatchObject({ status: 'exited', current_node_id: null, started_at: null });
  });

  it('a local time is the contact\'s own zone\'s, else the workspace\'s', async () => {
    const tokyo = await journey(chain, { attributes: { timezone: 'Asia/Tokyo' }, identities: [] });
    const plain = await journey(chain, { attributes: { timezone: 'Not/AZone' }, identities: [] });
    await api.as(plain.apiKey)('PUT', '/automation-settings', { timezone: 'America/Los_Angeles' });
    // 10:00 on the Saturday in Los Angeles; its clocks go forward that night, so 09:00 Sunday is 16:00 UTC.
    const after = new Date('2026-03-07T18:00:00Z');
    expect(await activities().localTimeAfter(tokyo.workspaceId, tokyo.contactId, '09:00', after.toISOString())).toBe(nextLocalTime(after, 'Asia/Tokyo', '09:00').toISOString());
    expect(await activities().localTimeAfter(plain.workspaceId, plain.contactId, '09:00', after.toISOString())).toBe('2026-03-08T16:00:00.000Z');
  });

  it('a branch evaluates its rules against the one contact now', async () => {
    const onTelegram = { type: 'group' as const, operator: 'and' as const, rules: [{ type: 'identity' as const, operator: 'has' as const, channel: 'telegram' as const }] };
    const withTelegram = await journey(chain, { identities: [['telegram', '777']] });
    const without = await journey(chain, { identities: [['email', 'gus@example.org']] });
    expect(await activities().evaluateJourneyBranch(withTelegram.workspaceId, withTelegram.contactId, onTelegram)).toBe(true);
    expect(await activities().evaluateJourneyBranch(without.workspaceId, without.contactId, onTelegram)).toBe(false);
  });
});

describe("WhatsApp's 24-hour window, by the journey's clock", () => {
  const CONTENT_SID = `HX${'fedcba9876543210'.repeat(2)}`;
  const afterWait = (wait: string) => (templates: Record<Channel, string>): JourneyGraph => ({
    entry: 'pause',
    nodes: [
      { id: 'pause', type: 'wait', durationMs: wait === 'P2D' ? 2 * DAY : 60 * 60_000, next: 'hello' },
      { id: 'hello', type: 'message', preferredChannel: 'whatsapp', fallbackChain: [], templateByChannel: { whatsapp: templates.whatsapp }, attachmentIds: [], contentSid: CONTENT_SID, contentVariables: { 1: '{{ contact.firstName }}' }, next: null },
    ],
  });

  it('a contact who wrote an hour before the message gets the template\'s text; two days later, the content template', async () => {
    for (const [wait, expected] of [['PT1H', 'text'], ['P2D', 'content template']] as const) {
      const phone = `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`;
      const subject = await journey(afterWait(wait), { identities: [['whatsapp', phone]] });
      await recordInbound(api.db, subject.workspaceId, phone, await env.now());
      expect(await runJourney(subject)).toEqual({ status: 'completed', reason: 'completed' });
      const [row] = await messagesOf(subject);
      expect({ wait, channel: row.channel }).toEqual({ wait, channel: 'whatsapp' });
      if (expected === 'text') {
        expect(row.content).toMatchObject({ templateVersionId: expect.any(String) });
        expect(row.content.contentSid).toBeUndefined();
      } else {
        expect(row.content).toMatchObject({ contentSid: CONTENT_SID, contentVariables: { 1: 'Ann' } });
        expect(row.content.templateVersionId).toBeUndefined();
      }
    }
  });

  it('without a content template, a contact outside the window is passed over: skipped outside_whatsapp_window', async () => {
    const subject = await journey(
      (templates) => ({ entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'whatsapp', fallbackChain: [], templateByChannel: { whatsapp: templates.whatsapp }, attachmentIds: [], next: null }] }),
      { identities: [['whatsapp', '+14155550199']] },
    );
    expect(await activities().enqueueJourneyMessage(subject.workspaceId, subject.enrollmentId, 'hello', new Date().toISOString())).toEqual({ state: 'skipped', reason: 'outside_whatsapp_window' });
    expect(await messagesOf(subject)).toEqual([]);
  });
});

describe('automation settings', () => {
  it('a workspace that never set them reads the defaults; a PUT changes only the fields it names', async () => {
    const { call } = await createTestWorkspace(api);
    expect(await call('GET', '/automation-settings')).toMatchObject({
      status: 200, body: { timezone: 'UTC', timezoneAttribute: 'timezone', quietHours: null, frequencyCaps: [] },
    });
    await call('PUT', '/automation-settings', { timezone: 'America/New_York', quietHours: { start: '22:00', end: '07:30' } });
    const changed = await call('PUT', '/automation-settings', { frequencyCaps: [{ channel: 'any', limit: 3, window: 604_800 }] });
    expect(changed).toMatchObject({
      status: 200,
      body: { timezone: 'America/New_York', quietHours: { start: '22:00', end: '07:30' }, frequencyCaps: [{ channel: 'any', limit: 3, windowSeconds: 604_800 }] },
    });
    expect((await call('PUT', '/automation-settings', { quietHours: null })).body).toMatchObject({ quietHours: null, timezone: 'America/New_York' });
  });

  it('an unknown time zone, a bad local time, a cap out of range or a window that is not a duration answer 422 naming the field', async () => {
    const { call } = await createTestWorkspace(api);
    expect(await call('PUT', '/automation-settings', { timezone: 'Mars/Olympus' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { timezone: expect.any(Array) } } } });
    expect(await call('PUT', '/automation-settings', { quietHours: { start: '25:00', end: '08:00' } })).toMatchObject({ status: 422 });
    const badCap = await call('PUT', '/automation-settings', { frequencyCaps: [{ channel: 'email', limit: 0, window: 'P1D' }] });
    expect(badCap.status).toBe(422);
    const badWindow = await call('PUT', '/automation-settings', { frequencyCaps: [{ channel: 'email', limit: 1, window: 'P1M' }] });
    expect(badWindow.status).toBe(422);
    expect(JSON.stringify(badWindow.body)).toContain('frequencyCaps');
    expect((await call('GET', '/automation-settings')).body).toMatchObject({ timezone: 'UTC', frequencyCaps: [] });
  });

  it('reading takes automations:read and writing automations:write', async () => {
    const reader = await createTestWorkspace(api, { scopes: ['automations:read'] });
    expect((await api.as(reader.apiKey)('GET', '/automation-settings')).status).toBe(200);
    expect((await api.as(reader.apiKey)('PUT', '/automation-settings', { timezone: 'UTC' })).status).toBe(403);
  });
});

describe('through the shipped workers', () => {
  // The whole path on the Temporal dev server: the journey's start, its workflow and activities on the default
  // worker, the dispatcher and the send workers, an SMTP sink as the provider; a database of its own.
  let stack: EmailStack;
  let client: Client;
  beforeAll(async () => {
    stack = await startEmailStack();
    client = await connectTemporal(stack.api.config);
  });
  afterAll(async () => {
    await client.connection.close();
    await stack.close();
  });

  it('a journey started by startEnrollmentWorkflow sends its email as marketing mail (one-click unsubscribe) and ends at its exit node', async () => {
    const subject = await journey(
      (templates) => ({ entry: 'hello', nodes: [emailMessage('hello', templates, 'bye'), { id: 'bye', type: 'exit' }] }),
      { identities: [['email', 'jo@example.org']] },
      { harness: stack.api },
    );
    await startEnrollmentWorkflow(client, stack.api.config.TASK_QUEUE_PREFIX, subject);
    expect(await client.workflow.getHandle(enrollmentWorkflowId(subject.enrollmentId)).result()).toEqual({ status: 'completed', reason: 'exit_node' });

    const [row] = await stack.api.db.query<{ id: string; enrollment_id: string }>('SELECT id, enrollment_id FROM messages WHERE workspace_id = $1', {
      bind: [subject.workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(row.enrollment_id).toBe(subject.enrollmentId);
    expect(await stack.waitForStatus(subject.workspaceId, row.id, ['sent', 'failed'])).toBe('sent');
    const mail = stack.sink.received.find((received) => received.recipients.includes('jo@example.org'));
    expect(mail?.raw).toMatch(/^List-Unsubscribe:\s+<http/m);
    expect(mail?.raw).toMatch(/^Subject: Hello/m);
    expect(mail?.raw).toContain('Hello Ann');
    const [enrollment] = await stack.api.db.query<{ status: string; exit_reason: string }>('SELECT status, exit_reason FROM enrollments WHERE id = $1', {
      bind: [subject.enrollmentId],
      type: QueryTypes.SELECT,
    });
    expect(enrollment).toEqual({ status: 'completed', exit_reason: 'exit_node' });
  });
});
