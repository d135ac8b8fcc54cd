import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

// Automations through the real API and database: drafts, checks naming the node, the lifecycle and its
// versions, enrollments listed and exited. Journeys started here are only asserted started (their
// interpreter is another part of the service).
let api: ApiHarness;
beforeAll(async () => {
  // A queue prefix of its own: no other worker on the shared Temporal server picks up these journeys.
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: `automations-${randomUUID().slice(0, 8)}-` });
});
afterAll(() => api.close());

jest.setTimeout(60_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const bodyOf = (response: ApiResponse) => response.body as Record<string, unknown>;

async function workspace() {
  const { workspaceId, apiKey, call } = await createTestWorkspace(api, { plan: 'pro' });
  return { workspaceId, apiKey, call };
}

const waitGraph = (duration: string | number = 'P1D') => ({ entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration, next: null }] });

async function createAutomation(call: Call, body: Record<string, unknown> = {}): Promise<{ id: string; versionId: string }> {
  const response = await call('POST', '/automations', { name: 'Welcome', trigger: { event: 'signed_up' }, graph: waitGraph(), ...body });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; versionId: string };
}

async function emailTemplate(call: Call): Promise<string> {
  const response = await call('POST', '/templates', { name: `t-${randomUUID()}`, subject: 'Welcome', body: '<p>Hi</p>' });
  return (bodyOf(response).id ?? (bodyOf(response).template as { id: string }).id) as string;
}

describe('drafts and their checks', () => {
  it('a draft is created, read and listed with the spec summary; trigger is the first of triggers', async () => {
    const { call } = await workspace();
    const templateId = await emailTemplate(call);
    const graph = {
      entry: 'hello',
      nodes: [
        { id: 'hello', type: 'message', label: 'Hello', preferredChannel: 'email', templateByChannel: { email: templateId }, next: 'later' },
        { id: 'later', type: 'wait', duration: 'P2D', next: 'done' },
        { id: 'done', type: 'exit' },
      ],
    };
    const created = await call('POST', '/automations', { name: 'Onboarding', description: 'New users', trigger: { event: 'signed_up', match: { plan: 'pro' } }, goal: { event: 'purchased' }, graph });
    expect(created).toMatchObject({ status: 201, body: { id: expect.any(String), versionId: expect.any(String), status: 'draft' } });
    const { id, versionId } = created.body as { id: string; versionId: string };

    const detail = await call('GET', `/automations/${id}`);
    expect(detail).toMatchObject({
      status: 200,
      body: {
        id,
        name: 'Onboarding',
        description: 'New users',
        status: 'draft',
        trigger: { event: 'signed_up', match: { plan: 'pro' } },
        triggers: [{ event: 'signed_up', match: { plan: 'pro' } }],
        version: null,
        activeEnrollments: 0,
        versionId: null,
        draftVersionId: versionId,
        goal: { event: 'purchased', match: {} },
        graph: { entry: 'hello' },
        publishedGraph: null,
      },
    });
    const listed = await call('GET', '/automations');
    expect(listed).toMatchObject({ status: 200, body: { total: 1, limit: 50, offset: 0, automations: [{ id, name: 'Onboarding', version: null, activeEnrollments: 0 }] } });
    expect(bodyOf(listed).automations as unknown[]).toHaveLength(1);
    expect((bodyOf(listed).automations as Array<Record<string, unknown>>)[0]).not.toHaveProperty('graph');
  });

  it('an automation without triggers lists trigger null and triggers []', async () => {
    const { call } = await workspace();
    const { id } = await createAutomation(call, { trigger: undefined });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({ trigger: null, triggers: [] });
  });

  it.each([
    [
      'a cycle',
      { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 60, next: 'b' }, { id: 'b', type: 'wait', duration: 60, next: 'a' }] },
      'graph.nodes[1].next',
      'Node "b": next "a" closes a cycle',
    ],
    ['a missing next', { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 60, next: 'nowhere' }] }, 'graph.nodes[0].next', 'Node "a": next "nowhere" is not a node'],
    [
      'an unreachable node',
      { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 60, next: null }, { id: 'island', type: 'exit' }] },
      'graph.nodes[1]',
      'Node "island" cannot be reached from the entry "a"',
    ],
    ['a bad duration', { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 'P3X', next: null }] }, 'graph.nodes[0].duration', 'Node "a": expected seconds'],
  ])('%s answers 422 naming the node', async (_situation, graph, field, message) => {
    const { call } = await workspace();
    const response = await call('POST', '/automations', { name: 'Broken', graph });
    expect(response.status).toBe(422);
    const { fieldErrors } = (bodyOf(response).error as { fieldErrors: Record<string, string[]> });
    expect(fieldErrors[field]?.[0]).toContain(message);
    expect((await call('GET', '/automations')).body).toMatchObject({ total: 0 });
  });

  it('a template that does not exist, or does not serve the channel, answers 422 on its templateByChannel naming the node', async () => {
    const { call } = await workspace();
    const missing = randomUUID();
    const graph = (templateByChannel: Record<string, string>, fallbackChain: string[] = []) => ({
      entry: 'hello',
      nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', fallbackChain, templateByChannel, next: null }],
    });
    const unknown = await call('POST', '/automations', { name: 'x', graph: graph({ email: missing }) });
    expect(unknown).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'graph.nodes[0].templateByChannel.email': [`Node "hello": no template ${missing} in the workspace`] } } } });

    const emailOnly = await emailTemplate(call);
    const wrongChannel = await call('POST', '/automations', { name: 'x', graph: graph({ email: emailOnly, telegram: emailOnly }, ['telegram']) });
    expect(wrongChannel).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { 'graph.nodes[0].templateByChannel.telegram': [`Node "hello": template ${emailOnly} does not serve telegram`] } } },
    });
    // Another workspace's template is as unknown as a missing one.
    const other = await workspace();
    const theirs = await emailTemplate(other.call);
    expect(await call('POST', '/automations', { name: 'x', graph: graph({ email: theirs }) })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { 'graph.nodes[0].templateByChannel.email': expect.any(Array) } } },
    });
  });

  it('the body\'s own shape is checked by field: no name, both trigger forms, more than 10 triggers', async () => {
    const { call } = await workspace();
    expect(await call('POST', '/automations', { graph: waitGraph() })).toMatchObject({ status: 422, body: { error: { fieldErrors: { name: expect.any(Array) } } } });
    const both = await call('POST', '/automations', { name: 'x', trigger: { event: 'a' }, triggers: [{ event: 'b' }], graph: waitGraph() });
    expect(both).toMatchObject({ status: 422, body: { error: { fieldErrors: { trigger: ['Give trigger or triggers, not both'] } } } });
    const many = await call('POST', '/automations', { name: 'x', triggers: Array.from({ length: 11 }, (_, i) => ({ event: `e${i}` })), graph: waitGraph() });
    expect(many).toMatchObject({ status: 422, body: { error: { fieldErrors: { triggers: expect.any(Array) } } } });
  });
});

describe('lifecycle and versions', () => {
  it('draft → active (v1) → paused → active (still v1) → edited and activated (v2) → archived; an archived one refuses every change', async () => {
    const { call } = await workspace();
    const { id, versionId } = await createAutomation(call);

    expect(await call('POST', `/automations/${id}/pause`)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await call('POST', `/automations/${id}/activate`)).toMatchObject({ status: 200, body: { id, status: 'active', version: 1, versionId } });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({
      status: 'active',
      version: 1,
      versionId,
      draftVersionId: versionId,
      publishedGraph: { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', durationMs: 86_400_000, next: null }] },
    });

    expect(await call('POST', `/automations/${id}/pause`)).toMatchObject({ status: 200, body: { id, status: 'paused' } });
    // A resume: the draft is what runs, so nothing is published again.
    expect(await call('POST', `/automations/${id}/activate`)).toMatchObject({ status: 200, body: { status: 'active', version: 1, versionId } });

    // The same definition sent again is no change: nothing new to publish.
    expect(await call('PATCH', `/automations/${id}`, { graph: waitGraph() })).toMatchObject({ status: 200, body: { draftVersionId: versionId } });
    const edited = await call('PATCH', `/automations/${id}`, { graph: waitGraph('PT12H') });
    expect(edited).toMatchObject({ status: 200, body: { status: 'active', version: 1, versionId } });
    const draftVersionId = bodyOf(edited).draftVersionId as string;
    expect(draftVersionId).not.toBe(versionId);
    // A name is not part of the journey: no new draft version.
    expect(await call('PATCH', `/automations/${id}`, { name: 'Renamed' })).toMatchObject({ status: 200, body: { name: 'Renamed', draftVersionId } });
    expect(await call('POST', `/automations/${id}/activate`)).toMatchObject({ status: 200, body: { version: 2, versionId: draftVersionId } });
    const versions = await api.db.query<{ version: number; graph: { nodes: Array<{ durationMs: number }> } }>(
      'SELECT version, graph FROM automation_versions WHERE automation_id = $1 ORDER BY version',
      { bind: [id], type: QueryTypes.SELECT },
    );
    expect(versions.map((row) => [row.version, row.graph.nodes[0].durationMs])).toEqual([[1, 86_400_000], [2, 43_200_000]]);

    expect(await call('POST', `/automations/${id}/archive`)).toMatchObject({ status: 200, body: { id, status: 'archived' } });
    for (const [method, path, body] of [['POST', '/activate'], ['POST', '/pause'], ['POST', '/archive'], ['PATCH', '', { name: 'again' }]] as const) {
      expect(await call(method, `/automations/${id}${path}`, body)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    }
  });

  it('an edit that breaks the graph is refused and leaves the draft as it was', async () => {
    const { call } = await workspace();
    const { id, versionId } = await createAutomation(call);
    const broken = await call('PATCH', `/automations/${id}`, { graph: { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 60, next: 'gone' }] } });
    expect(broken).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'graph.nodes[0].next': expect.any(Array) } } } });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({ draftVersionId: versionId, graph: waitGraph() });
  });

  it('activation checks the templates again: one deleted since the draft was saved answers 422', async () => {
    const { call } = await workspace();
    const templateId = await emailTemplate(call);
    const graph = { entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: templateId }, next: null }] };
    const { id } = await createAutomation(call, { graph });
    expect((await call('DELETE', `/templates/${templateId}`)).status).toBeLessThan(300);
    expect(await call('POST', `/automations/${id}/activate`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'graph.nodes[0].templateByChannel.email': expect.any(Array) } } } });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({ status: 'draft', version: null });
  });
});

describe('enrollments', () => {
  async function activeWithEnrollment(call: Call) {
    const { id } = await createAutomation(call);
    await call('POST', `/automations/${id}/activate`);
    const event = await call('POST', '/events', { event: 'signed_up', email: `${randomUUID()}@example.com` });
    expect(event).toMatchObject({ status: 202, body: { triggered: 1 } });
    const listed = await call('GET', `/automations/${id}/enrollments`);
    const [enrollment] = bodyOf(listed).data as Array<Record<string, unknown>>;
    return { id, enrollment };
  }

  it('an enrollment is listed with its version; exit ends it (exited, manual) and a second exit is 409', async () => {
    const { call } = await workspace();
    const { id, enrollment } = await activeWithEnrollment(call);
    expect(enrollment).toMatchObject({ automationId: id, version: 1, status: 'active', exitReason: null, exitedAt: null, enteredAt: expect.any(String) });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({ activeEnrollments: 1 });

    const exited = await call('POST', `/automations/${id}/enrollments/${enrollment.id}/exit`);
    expect(exited).toMatchObject({ status: 200, body: { id: enrollment.id, status: 'exited', exitReason: 'manual', exitedAt: expect.any(String) } });
    expect(await call('POST', `/automations/${id}/enrollments/${enrollment.id}/exit`)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await call('POST', `/automations/${id}/enrollments/${randomUUID()}/exit`)).toMatchObject({ status: 404 });
    expect((await call('GET', `/automations/${id}/enrollments?status=active`)).body).toMatchObject({ data: [], total: 0 });
    expect((await call('GET', `/automations/${id}/enrollments?status=exited`)).body).toMatchObject({ total: 1 });
    expect((await call('GET', `/automations/${id}`)).body).toMatchObject({ activeEnrollments: 0 });
  });

  it('archiving ends every active enrollment (exited, archived) in one step', async () => {
    const { call } = await workspace();
    const { id, enrollment } = await activeWithEnrollment(call);
    await call('POST', `/automations/${id}/archive`);
    const listed = await call('GET', `/automations/${id}/enrollments`);
    expect(listed).toMatchObject({ status: 200, body: { total: 1, data: [{ id: enrollment.id, status: 'exited', exitReason: 'archived' }] } });
  });

  it('enroll needs exactly one audience, at most 1,000 ids, an active automation, and the workspace\'s own list or segment', async () => {
    const { call } = await workspace();
    const { id } = await createAutomation(call);
    expect(await call('POST', `/automations/${id}/enroll`, { contactIds: [randomUUID()] })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    await call('POST', `/automations/${id}/activate`);
    expect(await call('POST', `/automations/${id}/enroll`, {})).toMatchObject({ status: 422, body: { error: { fieldErrors: { listId: ['Give exactly one of listId, segmentId and contactIds'] } } } });
    expect(await call('POST', `/automations/${id}/enroll`, { listId: randomUUID(), contactIds: [randomUUID()] })).toMatchObject({ status: 422 });
    expect(await call('POST', `/automations/${id}/enroll`, { contactIds: [] })).toMatchObject({ status: 422 });
    const tooMany = Array.from({ length: 1_001 }, () => randomUUID());
    expect(await call('POST', `/automations/${id}/enroll`, { contactIds: tooMany })).toMatchObject({ status: 422, body: { error: { fieldErrors: { contactIds: expect.any(Array) } } } });

    const other = await workspace();
    const theirList = bodyOf(await other.call('POST', '/lists', { name: 'theirs' })).id as string;
    const theirSegment = bodyOf(await other.call('POST', '/segments', { name: 'theirs', definition: { operator: 'and', rules: [] } })).id as string;
    expect(await call('POST', `/automations/${id}/enroll`, { listId: theirList })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await call('POST', `/automations/${id}/enroll`, { segmentId: theirSegment })).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});

describe('scopes and workspaces', () => {
  it('automations:read reads but cannot write; events:write alone cannot read automations', async () => {
    const { workspaceId, call } = await workspace();
    const { id } = await createAutomation(call);
    const reader = api.as((await createTestKey(api, workspaceId, ['automations:read'])).apiKey);
    expect((await reader('GET', '/automations')).status).toBe(200);
    expect((await reader('GET', `/automations/${id}/enrollments`)).status).toBe(200);
    expect(await reader('POST', `/automations/${id}/activate`)).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'automations:write' } });
    const events = api.as((await createTestKey(api, workspaceId, ['events:write'])).apiKey);
    expect(await events('GET', '/automations')).toMatchObject({ status: 403, body: { need: 'automations:read' } });
  });

  it('another workspace\'s automation is not found on every route, and is unchanged', async () => {
    const owner = await workspace();
    const intruder = await workspace();
    const { id } = await createAutomation(owner.call);
    const before = (await owner.call('GET', `/automations/${id}`)).body;
    for (const [method, path, body] of [
      ['GET', ''],
      ['PATCH', '', { name: 'taken' }],
      ['POST', '/activate'],
      ['POST', '/pause'],
      ['POST', '/archive'],
      ['POST', '/enroll', { contactIds: [randomUUID()] }],
      ['GET', '/enrollments'],
      ['POST', `/enrollments/${randomUUID()}/exit`],
    ] as const) {
      expect({ method, path, response: await intruder.call(method, `/automations/${id}${path}`, body) }).toMatchObject({ method, path, response: { status: 404, body: { error: 'not_found' } } });
    }
    expect((await owner.call('GET', `/automations/${id}`)).body).toEqual(before);
  });
});
