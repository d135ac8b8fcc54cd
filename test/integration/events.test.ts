import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createJourneySweeperActivities } from '../../activities/journey-sweeper';
import { enrollmentWorkflowId } from '../../core/ids';
import { createSequelize } from '../../db/sequelize';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { createIsolatedDatabase } from '../helpers/isolated-database';
import { temporalPorts } from '../../temporal/activity-ports';

// POST /events through the real API, database and Temporal dev server: stored, matched against active
// automations' triggers, enrolling and starting journeys, reaching running ones. The journeys themselves
// are another part of the service: here they are asserted started (their workflow exists), not run.
let api: ApiHarness;
let client: Client;
beforeAll(async () => {
  // A queue prefix of its own: no other worker on the shared Temporal server picks up these journeys.
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: `events-${randomUUID().slice(0, 8)}-` });
  client = await connectTemporal(api.config);
});
afterAll(async () => {
  await client.connection.close();
  await api.close();
});

jest.setTimeout(90_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const bodyOf = (response: ApiResponse) => response.body as Record<string, unknown>;
const waitGraph = { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration: 'P7D', next: null }] };

async function workspace(harness: ApiHarness = api) {
  const { workspaceId, call } = await createTestWorkspace(harness, { plan: 'pro' });
  return { workspaceId, call };
}

async function activeAutomation(call: Call, body: Record<string, unknown>): Promise<string> {
  const created = await call('POST', '/automations', { name: 'Journey', graph: waitGraph, ...body });
  const { id } = created.body as { id: string };
  expect(await call('POST', `/automations/${id}/activate`)).toMatchObject({ status: 200 });
  return id;
}

async function enrollmentsOf(db: Sequelize, automationId: string) {
  return db.query<{ id: string; contact_id: string; source: string; trigger_event_id: string | null; started_at: Date | null; status: string }>(
    'SELECT id, contact_id, source, trigger_event_id, started_at, status FROM enrollments WHERE automation_id = $1 ORDER BY entered_at',
    { bind: [automationId], type: QueryTypes.SELECT },
  );
}

async function workflowExists(enrollmentId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(enrollmentWorkflowId(enrollmentId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

describe('POST /events', () => {
  it('an event matching an active automation\'s trigger enrolls its contact and starts the journey', async () => {
    const { call } = await workspace();
    const automationId = await activeAutomation(call, { trigger: { event: 'signed_up', match: { plan: 'pro' } } });
    const contact = await call('POST', '/contacts', { identities: [{ channel: 'email', address: `${randomUUID()}@example.com` }] });
    const contactId = bodyOf(contact).id as string;

    const accepted = await call('POST', '/events', { event: 'signed_up', contactId, properties: { plan: 'pro', seats: 3 } });
    expect(accepted).toMatchObject({ status: 202, body: { id: expect.any(String), triggered: 1, goalsCompleted: 0 } });
    const [enrollment] = await enrollmentsOf(api.db, automationId);
    expect(enrollment).toMatchObject({ contact_id: contactId, source: 'event', trigger_event_id: bodyOf(accepted).id, status: 'active', started_at: expect.any(Date) });
    expect(await workflowExists(enrollment.id)).toBe(true);
    const [stored] = await api.db.query<{ processed_at: Date | null }>('SELECT processed_at FROM contact_events WHERE id = $1', { bind: [bodyOf(accepted).id], type: QueryTypes.SELECT });
    expect(stored.processed_at).toBeInstanceOf(Date);

    // While that enrollment is active, the same trigger enrolls nobody (one active enrollment per automation).
    expect(await call('POST', '/events', { event: 'signed_up', contactId, properties: { plan: 'pro' } })).toMatchObject({ status: 202, body: { triggered: 0 } });
    expect(await enrollmentsOf(api.db, automationId)).toHaveLength(1);
  });

  it('an event whose properties do not match, or whose automation is paused, enrolls nobody', async () => {
    const { call } = await workspace();
    const automationId = await activeAutomation(call, { trigger: { event: 'signed_up', match: { plan: 'pro' } } });
    const email = `${randomUUID()}@example.com`;
    expect(await call('POST', '/events', { event: 'signed_up', email, properties: { plan: 'free' } })).toMatchObject({ status: 202, body: { triggered: 0 } });
    expect(await call('POST', '/events', { event: 'signed_in', email, properties: { plan: 'pro' } })).toMatchObject({ status: 202, body: { triggered: 0 } });
    await call('POST', `/automations/${automationId}/pause`);
    expect(await call('POST', '/events', { event: 'signed_up', email, properties: { plan: 'pro' } })).toMatchObject({ status: 202, body: { triggered: 0 } });
    expect(await enrollmentsOf(api.db, automationId)).toHaveLength(0);
  });

  it('a repeat idempotencyKey answers 200 duplicate with the first id: one stored event, one enrollment', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call, { trigger: { event: 'ordered' } });
    const email = `${randomUUID()}@example.com`;
    const body = { event: 'ordered', email, idempotencyKey: `order-${randomUUID()}` };
    const first = await call('POST', '/events', body);
    expect(first).toMatchObject({ status: 202, body: { triggered: 1 } });
    const again = await call('POST', '/events', body);
    expect(again).toEqual(expect.objectContaining({ status: 200, body: { id: bodyOf(first).id, triggered: 0, goalsCompleted: 0, status: 'duplicate' } }));
    const stored = await api.db.query<{ n: string }>('SELECT count(*) AS n FROM contact_events WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(Number(stored[0].n)).toBe(1);
    expect(await enrollmentsOf(api.db, automationId)).toHaveLength(1);
  });

  it('two requests at once with one idempotencyKey store one event: one answers 202, the other 200 duplicate with its id', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call, { trigger: { event: 'ordered' } });
    const body = { event: 'ordered', email: `${randomUUID()}@example.com`, idempotencyKey: `order-${randomUUID()}` };
    const answers = await Promise.all([call('POST', '/events', body), call('POST', '/events', body)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 202]);
    expect(new Set(answers.map((answer) => bodyOf(answer).id)).size).toBe(1);
    const stored = await api.db.query<{ n: string }>('SELECT count(*) AS n FROM contact_events WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(Number(stored[0].n)).toBe(1);
    expect(await enrollmentsOf(api.db, automationId)).toHaveLength(1);
  });

  it('an event a running journey waits for (wait_for_event) reaches it and completes no goal', async () => {
    const { call } = await workspace();
    const graph = {
      entry: 'await',
      nodes: [
        { id: 'await', type: 'wait_for_event', event: 'clicked', timeout: 'P1D', onEvent: 'done', onTimeout: null },
        { id: 'done', type: 'exit' },
      ],
    };
    const automationId = await activeAutomation(call, { trigger: { event: 'signed_up' }, graph });
    const email = `${randomUUID()}@example.com`;
    await call('POST', '/events', { event: 'signed_up', email });
    const [enrollment] = await enrollmentsOf(api.db, automationId);
    expect(await call('POST', '/events', { event: 'clicked', email })).toMatchObject({ status: 202, body: { triggered: 0, goalsCompleted: 0 } });
    // An event nothing listens for is not signalled.
    await call('POST', '/events', { event: 'browsed', email });
    const { events } = await client.workflow.getHandle(enrollmentWorkflowId(enrollment.id)).fetchHistory();
    const signalled = (events ?? []).flatMap((event) => {
      const attributes = event.workflowExecutionSignaledEventAttributes;
      return attributes?.signalName === 'event' ? [attributes] : [];
    });
    expect(signalled).toHaveLength(2);
  });

  it('an event matching the goal of a running enrollment counts it in goalsCompleted and reaches its journey; one matching nothing does not', async () => {
    const { call } = await workspace();
    const automationId = await activeAutomation(call, { trigger: { event: 'signed_up' }, goal: { event: 'purchased', match: { sku: 'A' } } });
    const email = `${randomUUID()}@example.com`;
    await call('POST', '/events', { event: 'signed_up', email });
    const [enrollment] = await enrollmentsOf(api.db, automationId);
    expect(await call('POST', '/events', { event: 'purchased', email, properties: { sku: 'B' } })).toMatchObject({ status: 202, body: { goalsCompleted: 0 } });
    const reached = await call('POST', '/events', { event: 'purchased', email, properties: { sku: 'A' } });
    expect(reached).toMatchObject({ status: 202, body: { triggered: 0, goalsCompleted: 1 } });
    // The goal is matched before the journey is told: its history holds the trigger and the goal event, not sku B.
    const { events } = await client.workflow.getHandle(enrollmentWorkflowId(enrollment.id)).fetchHistory();
    const signalled = (events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'event');
    expect(signalled.length).toBe(2);
  });

  it('an unknown email creates the contact with consent unknown; a known one is reused', async () => {
    const { call } = await workspace();
    const email = `${randomUUID()}@example.com`;
    await call('POST', '/events', { event: 'visited', email });
    await call('POST', '/events', { event: 'visited', email });
    const found = await call('GET', `/contacts?address=${encodeURIComponent(email)}`);
    const rows = Object.values(bodyOf(found)).find(Array.isArray) as Array<{ id: string }>;
    expect(rows).toHaveLength(1);
    const contact = await call('GET', `/contacts/${rows[0].id}`);
    expect(contact.body).toMatchObject({ identities: [{ channel: 'email', address: email, consent: 'unknown' }] });
  });

  it('refuses an event without contact, a contact of another workspace (404), and bad fields by name', async () => {
    const { call } = await workspace();
    const other = await workspace();
    const theirs = bodyOf(await other.call('POST', '/contacts', { identities: [{ channel: 'email', address: `${randomUUID()}@example.com` }] })).id;
    expect(await call('POST', '/events', { event: 'x' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { contactId: ['Give contactId or email'] } } } });
    expect(await call('POST', '/events', { event: 'x', contactId: theirs })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await call('POST', '/events', { event: '', contactId: theirs })).toMatchObject({ status: 422, body: { error: { fieldErrors: { event: expect.any(Array) } } } });
    expect(await call('POST', '/events', { event: 'x', email: 'not an address' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { email: expect.any(Array) } } } });
    expect(await call('POST', '/events', { event: 'x', email: 'a@example.com', idempotencyKey: 'short' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { idempotencyKey: expect.any(Array) } } } });
    expect(await call('POST', '/events', { event: 'x', email: 'a@example.com', occurredAt: 'yesterday' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { occurredAt: expect.any(Array) } } } });
  });

  it('needs events:write', async () => {
    const { workspaceId } = await workspace();
    const reader = api.as((await createTestKey(api, workspaceId, ['automations:read'])).apiKey);
    expect(await reader('POST', '/events', { event: 'x', email: 'a@example.com' })).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'events:write' } });
  });
});

describe('Temporal away, then the journey sweeper', () => {
  it('an event stored while Temporal is unreachable is answered 202 from the database; the sweeper starts its journey and marks it processed', async () => {
    // A database of its own: the sweeper takes every unstarted row it finds.
    const database = await createIsolatedDatabase(process.env.DATABASE_URL as string);
    const prefix = `sweep-${randomUUID().slice(0, 8)}-`;
    const away = await startApi({ RATE_LIMIT_PER_SECOND: '1000', DATABASE_URL: database.url, TEMPORAL_ADDRESS: '127.0.0.1:9', TASK_QUEUE_PREFIX: prefix });
    const db = createSequelize(database.url);
    try {
      const { call } = await workspace(away);
      const automationId = await activeAutomation(call, { trigger: { event: 'signed_up' } });
      const accepted = await call('POST', '/events', { event: 'signed_up', email: `${randomUUID()}@example.com` });
      expect(accepted).toMatchObject({ status: 202, body: { triggered: 1, goalsCompleted: 0 } });
      const [enrollment] = await enrollmentsOf(db, automationId);
      expect(enrollment).toMatchObject({ status: 'active', started_at: null });
      expect(await workflowExists(enrollment.id)).toBe(false);

      // An exit needs no Temporal (the row is the truth); an enroll request, which stores nothing, answers 503.
      const second = await call('POST', '/events', { event: 'signed_up', email: `${randomUUID()}@example.com` });
      expect(second).toMatchObject({ status: 202, body: { triggered: 1 } });
      const exitedId = (await enrollmentsOf(db, automationId)).find((row) => row.id !== enrollment.id)?.id;
      expect(await call('POST', `/automations/${automationId}/enrollments/${exitedId}/exit`)).toMatchObject({ status: 200, body: { status: 'exited', exitReason: 'manual' } });
      expect(await call('POST', `/automations/${automationId}/enroll`, { contactIds: [randomUUID()] })).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });

      const sweeper = createJourneySweeperActivities({ db, ...temporalPorts(client, prefix) });
      const report = await sweeper.sweepJourneys({ olderThanMs: 0, limit: 100 });
      // The exited enrollment is not started; both events are matched (the second enrolls nobody again).
      expect(report).toEqual({ unstarted: 1, started: 1, unprocessed: 2, processed: 2 });
      expect(await workflowExists(exitedId as string)).toBe(false);
      expect(await enrollmentsOf(db, automationId)).toHaveLength(2);
      expect(await workflowExists(enrollment.id)).toBe(true);
      const after = (await enrollmentsOf(db, automationId)).find((row) => row.id === enrollment.id);
      expect(after?.started_at).toBeInstanceOf(Date);
      const [event] = await db.query<{ processed_at: Date | null }>('SELECT processed_at FROM contact_events WHERE id = $1', { bind: [bodyOf(accepted).id], type: QueryTypes.SELECT });
      expect(event.processed_at).toBeInstanceOf(Date);
      // The journey got its triggering event with its start, once.
      const { events } = await client.workflow.getHandle(enrollmentWorkflowId(enrollment.id)).fetchHistory();
      expect((events ?? []).filter((entry) => entry.workflowExecutionSignaledEventAttributes?.signalName === 'event')).toHaveLength(1);
      // A second round finds nothing left.
      expect(await sweeper.sweepJourneys({ olderThanMs: 0, limit: 100 })).toEqual({ unstarted: 0, started: 0, unprocessed: 0, processed: 0 });
    } finally {
      await away.close();
      await db.close();
      await database.drop();
    }
  });
});
