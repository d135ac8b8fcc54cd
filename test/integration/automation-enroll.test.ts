import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { NativeConnection, Worker } from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { createAutomationEnrollActivities } from '../../activities/automation-enroll';
import { createJourneyActivities } from '../../activities/journeys';
import { automationEnrollWorkflowId, enrollmentWorkflowId } from '../../core/ids';
import { taskQueueName } from '../../core/task-queues';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { seedContacts } from '../helpers/campaigns';
import { temporalPorts } from '../../temporal/activity-ports';
import { workflowBundle } from '../../workers/workflow-bundle';

// POST /automations/:id/enroll through the real API, the enroll workflow on a worker of its own queue
// and its activities on the test database. The journeys it starts are asserted started; the worker has their
// activities too, so each enters and waits (a journey task failing for want of one would only add noise).
const prefix = `enroll-${randomUUID().slice(0, 8)}-`;
let api: ApiHarness;
let client: Client;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: prefix });
  client = await connectTemporal(api.config);
  connection = await NativeConnection.connect({ address: api.config.TEMPORAL_ADDRESS });
  worker = await Worker.create({
    connection,
    namespace: api.config.TEMPORAL_NAMESPACE,
    taskQueue: taskQueueName(prefix, 'default'),
    workflowBundle: await workflowBundle(),
    activities: { ...createAutomationEnrollActivities({ db: api.db, ...temporalPorts(client, prefix) }), ...createJourneyActivities({ db: api.db }) },
  });
  running = worker.run();
});
afterAll(async () => {
  worker.shutdown();
  await running;
  // Closed, or the file's Temporal runtime (and with it the file's modules) outlives the file.
  await connection.close();
  await client.connection.close();
  await api.close();
});

jest.setTimeout(120_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const bodyOf = (response: ApiResponse) => response.body as Record<string, unknown>;

async function workspace() {
  const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
  return { workspaceId, call };
}

async function activeAutomation(call: Call): Promise<string> {
  const created = await call('POST', '/automations', { name: 'Journey', graph: { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration: 'P3D', next: null }] } });
  const { id } = created.body as { id: string };
  await call('POST', `/automations/${id}/activate`);
  return id;
}

/** Enrolls, waits for the enroll workflow, and answers how many it enrolled. */
async function enroll(call: Call, automationId: string, body: unknown, audience: string): Promise<number> {
  const queued = await call('POST', `/automations/${automationId}/enroll`, body);
  expect(queued).toMatchObject({ status: 202, body: { id: expect.any(String), queued: true, audience } });
  return client.workflow.getHandle<() => Promise<number>>(automationEnrollWorkflowId(bodyOf(queued).id as string)).result();
}

async function enrollmentsOf(automationId: string) {
  return api.db.query<{ id: string; contact_id: string; source: string; started_at: Date | null; status: string }>(
    'SELECT id, contact_id, source, started_at, status FROM enrollments WHERE automation_id = $1 ORDER BY contact_id',
    { bind: [automationId], type: QueryTypes.SELECT },
  );
}

describe('enroll', () => {
  it('a list\'s members are enrolled in the current version and their journeys started; a second enroll adds none while they are active', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call);
    const listId = bodyOf(await call('POST', '/lists', { name: 'members' })).id as string;
    const members = await seedContacts(api.db, workspaceId, { count: 7, prefix: 'member', listId });
    await seedContacts(api.db, workspaceId, { count: 2, prefix: 'outside' });

    expect(await enroll(call, automationId, { listId }, 'list')).toBe(7);
    const rows = await enrollmentsOf(automationId);
    expect(rows.map((row) => row.contact_id).sort()).toEqual(members.map((member) => member.id).sort());
    expect(rows.every((row) => row.source === 'list' && row.status === 'active' && row.started_at instanceof Date)).toBe(true);
    const described = await client.workflow.getHandle(enrollmentWorkflowId(rows[0].id)).describe();
    expect(described.type).toBe('journeyWorkflow');

    expect(await enroll(call, automationId, { listId }, 'list')).toBe(0);
    expect(await enrollmentsOf(automationId)).toHaveLength(7);
    expect((await call('GET', `/automations/${automationId}`)).body).toMatchObject({ activeEnrollments: 7 });
  });

  it('a segment\'s members are enrolled as the segment is evaluated now', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call);
    const vip = await seedContacts(api.db, workspaceId, { count: 3, prefix: 'vip' });
    await seedContacts(api.db, workspaceId, { count: 2, prefix: 'plain' });
    const tagId = bodyOf(await call('POST', '/tags', { name: 'vip' })).id as string;
    for (const contact of vip) await call('POST', `/contacts/${contact.id}/tags`, { tags: ['vip'] });
    const segment = await call('POST', '/segments', { name: 'vips', definition: { operator: 'and', rules: [{ type: 'tag', operator: 'has', tagId }] } });

    expect(await enroll(call, automationId, { segmentId: bodyOf(segment).id }, 'segment')).toBe(3);
    expect((await enrollmentsOf(automationId)).map((row) => row.contact_id).sort()).toEqual(vip.map((contact) => contact.id).sort());
  });

  it('given ids are enrolled once each; ids of other workspaces and unknown ids are skipped; one exited may be enrolled again', async () => {
    const { call, workspaceId } = await workspace();
    const other = await workspace();
    const automationId = await activeAutomation(call);
    const mine = await seedContacts(api.db, workspaceId, { count: 3, prefix: 'mine' });
    const [theirs] = await seedContacts(api.db, other.workspaceId, { count: 1, prefix: 'theirs' });
    const ids = [...mine.map((contact) => contact.id), mine[0].id, theirs.id, randomUUID()];

    expect(await enroll(call, automationId, { contactIds: ids }, 'contacts')).toBe(3);
    const rows = await enrollmentsOf(automationId);
    expect(rows.every((row) => row.source === 'contacts')).toBe(true);

    const first = rows.find((row) => row.contact_id === mine[0].id) as { id: string };
    await call('POST', `/automations/${automationId}/enrollments/${first.id}/exit`);
    expect(await enroll(call, automationId, { contactIds: ids }, 'contacts')).toBe(1);
    expect(await enrollmentsOf(automationId)).toHaveLength(4);
  });

  it('a paused automation refuses enroll (409), and a page of a request queued before the pause stops and enrolls nobody', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call);
    const contacts = await seedContacts(api.db, workspaceId, { count: 2, prefix: 'paused' });
    await call('POST', `/automations/${automationId}/pause`);
    const contactIds = contacts.map((contact) => contact.id);
    expect(await call('POST', `/automations/${automationId}/enroll`, { contactIds })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const activities = createAutomationEnrollActivities({ db: api.db, ...temporalPorts(client, prefix) });
    const page = await activities.enrollAudiencePage({ workspaceId, automationId, audience: { contactIds }, cursor: null, limit: 500 });
    expect(page).toEqual({ state: 'stopped', cursor: null, enrolled: 0 });
    expect(await enrollmentsOf(automationId)).toHaveLength(0);
  });

  it('pages follow contact ids: a page of 2 over 5 contacts goes on from the last id it saw', async () => {
    const { call, workspaceId } = await workspace();
    const automationId = await activeAutomation(call);
    const ids = (await seedContacts(api.db, workspaceId, { count: 5, prefix: 'paged' })).map((contact) => contact.id).sort();
    const activities = createAutomationEnrollActivities({ db: api.db, ...temporalPorts(client, prefix) });
    const pages = [];
    let cursor: string | null = null;
    for (let page = 0; page < 4; page += 1) {
      const result = await activities.enrollAudiencePage({ workspaceId, automationId, audience: { contactIds: ids }, cursor, limit: 2 });
      pages.push(result);
      cursor = result.cursor;
      if (result.state !== 'more') break;
    }
    expect(pages).toEqual([
      { state: 'more', cursor: ids[1], enrolled: 2 },
      { state: 'more', cursor: ids[3], enrolled: 2 },
      { state: 'done', cursor: ids[4], enrolled: 1 },
    ]);
    expect(await enrollmentsOf(automationId)).toHaveLength(5);
  });
});
