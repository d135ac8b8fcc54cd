import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createAutomationLinks } from '../../api/automations/links';
import { createAutomationSimulation } from '../../api/automations/simulation';
import { SimulateBody, type SimulateInput } from '../../api/automations/simulation-schemas';
import { loadConfig } from '../../core/config';
import { type AppError, isAppError } from '../../core/errors';
import type { EventMatch, JourneyGraph } from '../../core/journeys/graph';
import type { Channel } from '../../core/identities';
import { insertContactEvent } from '../../db/repositories/contact-events';
import { insertIdentities } from '../../db/repositories/contact-identities';
import { insertContact } from '../../db/repositories/contacts';
import { insertTemplate } from '../../db/repositories/templates';
import { createSequelize } from '../../db/sequelize';
import { createTemplateRenderer, templateRendererOptions, type TemplateRenderer } from '../../infra/template-renderer';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

const DAY = 86_400_000;

/** Rows as the automations API and the journey runtime write them (db/migrations/0020-automations.ts). */
async function createAutomation(
  db: Sequelize,
  workspaceId: string,
  options: { draft?: unknown; published?: { graph: JourneyGraph; goal?: EventMatch | null } },
): Promise<{ automationId: string; versionId: string | null; draftVersionId: string }> {
  const automationId = randomUUID();
  const draftVersionId = randomUUID();
  const versionId = options.published ? randomUUID() : null;
  const draft = options.draft ?? { triggers: [], goal: null, graph: { entry: 'x', nodes: [{ id: 'x', type: 'exit' }] } };
  await db.query(
    `INSERT INTO automations (id, workspace_id, name, status, draft, draft_version_id, current_version_id)
     VALUES ($1, $2, 'Onboarding', $3, $4::jsonb, $5, $6)`,
    { bind: [automationId, workspaceId, versionId ? 'active' : 'draft', JSON.stringify(draft), draftVersionId, versionId] },
  );
  if (options.published && versionId) {
    await db.query(
      `INSERT INTO automation_versions (id, workspace_id, automation_id, version, goal, graph) VALUES ($1, $2, $3, 1, $4::jsonb, $5::jsonb)`,
      { bind: [versionId, workspaceId, automationId, JSON.stringify(options.published.goal ?? null), JSON.stringify(options.published.graph)] },
    );
  }
  return { automationId, versionId, draftVersionId };
}

async function createContact(db: Sequelize, workspaceId: string, attributes: Record<string, unknown>, addresses: Partial<Record<Channel, string>>): Promise<string> {
  return db.transaction(async (transaction) => {
    const contact = await insertContact(db, workspaceId, attributes, transaction);
    const identities = Object.entries(addresses).map(([channel, address]) => ({
      channel: channel as Channel, address: address as string, consent: 'opted_in' as const, verified: true, isPrimary: true,
    }));
    await insertIdentities(db, workspaceId, contact.id, identities, transaction);
    return contact.id;
  });
}

async function createTemplate(db: Sequelize, workspaceId: string): Promise<string> {
  const template = await insertTemplate(db, workspaceId, `welcome-${randomUUID().slice(0, 8)}`, {
    channels: ['email', 'whatsapp'],
    format: 'html',
    subject: 'Welcome, {{ contact.firstName }}',
    body: '<p>Hello {{ contact.firstName }} ({{ contact.email }})</p>',
    channelText: { whatsapp: 'Hi {{ contact.firstName }} on WhatsApp' },
    variables: ['contact.firstName', 'contact.email'],
  });
  return template.id;
}

const message = (id: string, templateId: string, next: string | null) => ({
  id, type: 'message' as const, preferredChannel: 'email' as const, fallbackChain: ['whatsapp' as const],
  templateByChannel: { email: templateId, whatsapp: templateId }, attachmentIds: [], next,
});

async function failure(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('POST /automations/:id/simulate (the service, on the real database)', () => {
  let db: Sequelize;
  let renderer: TemplateRenderer;
  let simulation: ReturnType<typeof createAutomationSimulation>;
  const body = (input: Record<string, unknown>): SimulateInput => SimulateBody.parse(input);

  beforeAll(() => {
    const config = loadConfig(process.env);
    db = createSequelize(config.DATABASE_URL);
    renderer = createTemplateRenderer(templateRendererOptions(config));
    simulation = createAutomationSimulation({ db, templateRenderer: renderer });
  });
  afterAll(async () => {
    await renderer.close();
    await db.close();
  });

  it('a stored contact walks the published version: rendered messages, the branch from its attributes, completed, and nothing written', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const templateId = await createTemplate(db, workspaceId);
    const contactId = await createContact(db, workspaceId, { firstName: 'Ada', plan: 'pro' }, { email: 'ada@example.com' });
    const graph: JourneyGraph = {
      entry: 'welcome',
      nodes: [
        message('welcome', templateId, 'wait'),
        { id: 'wait', type: 'wait', durationMs: 2 * DAY, next: 'pro?' },
        { id: 'pro?', type: 'branch', label: 'Pro plan?', condition: { type: 'group', operator: 'and', rules: [{ type: 'attribute', key: 'plan', operator: 'eq', value: 'pro' }] }, then: 'tips', else: 'bye' },
        { ...message('tips', templateId, null), label: 'Pro tips' },
        { id: 'bye', type: 'exit' },
      ],
    };
    const { automationId, versionId } = await createAutomation(db, workspaceId, { published: { graph } });
    const result = await simulation.simulate(workspaceId, automationId, body({ contactId, startAt: '2026-05-04T10:00:00Z' }));
    expect(result.path).toEqual([
      { nodeId: 'welcome', nodeType: 'message', label: 'Welcome, Ada', at: '2026-05-04T10:00:00.000Z', outcome: 'sent' },
      { nodeId: 'wait', nodeType: 'wait', label: 'wait', at: '2026-05-04T10:00:00.000Z', outcome: 'waited' },
      { nodeId: 'pro?', nodeType: 'branch', label: 'Pro plan?', at: '2026-05-06T10:00:00.000Z', outcome: 'then' },
      { nodeId: 'tips', nodeType: 'message', label: 'Pro tips', at: '2026-05-06T10:00:00.000Z', outcome: 'sent' },
    ]);
    expect(result.messages).toHaveLength(2);
    expect(result.messages[0]).toEqual({
      nodeId: 'welcome', channel: 'email', to: 'ada@example.com', subject: 'Welcome, Ada', at: '2026-05-04T10:00:00.000Z',
      html: expect.stringContaining('Hello Ada (ada@example.com)'), text: expect.stringContaining('Hello Ada (ada@example.com)'),
    });
    expect(result.messages[0].html).not.toContain('/t/');
    expect(result).toMatchObject({ outcome: { status: 'completed', exitReason: 'completed', at: '2026-05-06T10:00:00.000Z' }, version: 1, versionId, notes: [] });
    const [written] = await db.query<{ messages: string; enrollments: string }>(
      `SELECT (SELECT count(*) FROM messages WHERE workspace_id = $1) AS messages, (SELECT count(*) FROM enrollments WHERE workspace_id = $1) AS enrollments`,
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    expect(written).toEqual({ messages: '0', enrollments: '0' });
  });

  it('quiet hours in the contact\'s zone and a cap counting its real campaign message move the send to the allowed morning', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const templateId = await createTemplate(db, workspaceId);
    const contactId = await createContact(db, workspaceId, { firstName: 'Bo', tz: 'America/New_York' }, { email: 'bo@example.com' });
    await db.query(
      `WITH zone AS (UPDATE workspaces SET timezone = 'Europe/Paris' WHERE id = $1)
       INSERT INTO journey_settings (workspace_id, quiet_hours, frequency_caps, timezone_attribute) VALUES ($1, $2::jsonb, $3::jsonb, 'tz')`,
      { bind: [workspaceId, JSON.stringify({ start: '21:00', end: '08:00' }), JSON.stringify([{ channel: 'email', limit: 1, windowMs: DAY }])] },
    );
    const [sent] = await queueMessages(db, workspaceId, { kind: 'campaign', count: 1, from: 'news@example.com' });
    await db.query(`UPDATE messages SET contact_id = $2, created_at = '2026-01-15T10:00:00Z' WHERE id = $1`, { bind: [sent, contactId] });
    const { automationId } = await createAutomation(db, workspaceId, { published: { graph: { entry: 'm', nodes: [message('m', templateId, null)] } } });
    // 12:00Z is 07:00 in New York (quiet until 08:00); the cap frees at 10:00Z the next day, 05:00 there: quiet again.
    const result = await simulation.simulate(workspaceId, automationId, body({ contactId, startAt: '2026-01-15T12:00:00Z' }));
    expect(result.messages[0]).toMatchObject({ at: '2026-01-16T13:00:00.000Z', deferred: { from: '2026-01-15T12:00:00.000Z', reason: 'quiet_hours' } });
  });

  it('a synthetic contact: the fallback channel\'s text, the wait_for_event branch, unevaluable conditions noted, then the goal exits', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const templateId = await createTemplate(db, workspaceId);
    const graph: JourneyGraph = {
      entry: 'hello',
      nodes: [
        message('hello', templateId, 'clicked?'),
        { id: 'clicked?', type: 'wait_for_event', event: 'clicked', match: { cta: 'start' }, timeoutMs: DAY, onEvent: 'tagged?', onTimeout: null },
        { id: 'tagged?', type: 'branch', condition: { type: 'group', operator: 'or', rules: [{ type: 'tag', operator: 'has', tagId: randomUUID() }, { type: 'event', name: 'clicked', operator: 'at_least', count: 1 }] }, then: 'later', else: null },
        { id: 'later', type: 'wait', durationMs: 7 * DAY, next: 'again' },
        message('again', templateId, null),
      ],
    };
    const { automationId } = await createAutomation(db, workspaceId, { published: { graph, goal: { event: 'purchase', match: {} } } });
    const result = await simulation.simulate(workspaceId, automationId, body({
      contact: { attributes: { firstName: 'Cy' }, phone: '+33 6 12 34 56 78' },
      startAt: '2026-05-04T10:00:00Z',
      events: [
        { event: 'purchase', at: '2026-05-08T09:00:00Z' },
        { event: 'clicked', properties: { cta: 'start' }, at: '2026-05-04T16:00:00Z' },
      ],
    }));
    expect(result.messages).toEqual([{ nodeId: 'hello', channel: 'whatsapp', to: '+33612345678', subject: null, text: 'Hi Cy on WhatsApp', at: '2026-05-04T10:00:00.000Z' }]);
    expect(result.path.map((step) => [step.nodeId, step.outcome])).toEqual([['hello', 'sent'], ['clicked?', 'event'], ['tagged?', 'then'], ['later', 'goal_reached']]);
    expect(result.outcome).toEqual({ status: 'exited', exitReason: 'goal_reached', at: '2026-05-08T09:00:00.000Z' });
    expect(result.notes).toEqual([
      'Branch "tagged?": a tag condition (tag has) needs a stored contact; taken as false',
      'Node "hello": free-form WhatsApp; if the contact has not written within 24 hours when it is queued, WhatsApp is passed over (outside_whatsapp_window)',
    ]);
  });

  it('a stored contact\'s event conditions count its stored events, not the simulated ones, and say so', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const contactId = await createContact(db, workspaceId, {}, {});
    await insertContactEvent(db, workspaceId, { contactId, name: 'purchase', occurredAt: new Date() });
    const graph: JourneyGraph = {
      entry: 'buyer?',
      nodes: [
        { id: 'buyer?', type: 'branch', condition: { type: 'group', operator: 'and', rules: [{ type: 'event', name: 'purchase', operator: 'at_least', count: 2 }] }, then: 'yes', else: 'no' },
        { id: 'yes', type: 'exit' },
        { id: 'no', type: 'exit' },
      ],
    };
    const { automationId } = await createAutomation(db, workspaceId, { published: { graph } });
    const result = await simulation.simulate(workspaceId, automationId, body({ contactId, events: [{ event: 'purchase', at: new Date().toISOString() }] }));
    expect(result.path.map((step) => step.nodeId)).toEqual(['buyer?', 'no']);
    expect(result.outcome).toMatchObject({ status: 'completed', exitReason: 'exit_node' });
    expect(result.notes).toEqual(['Branch "buyer?": evaluated against the stored contact as of now; the simulated events are not counted']);
    await insertContactEvent(db, workspaceId, { contactId, name: 'purchase', occurredAt: new Date() });
    expect((await simulation.simulate(workspaceId, automationId, body({ contactId }))).path.map((step) => step.nodeId)).toEqual(['buyer?', 'yes']);
  });

  it('a message no channel reaches is skipped with a note', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const templateId = await createTemplate(db, workspaceId);
    const { automationId } = await createAutomation(db, workspaceId, { published: { graph: { entry: 'm', nodes: [message('m', templateId, null)] } } });
    const result = await simulation.simulate(workspaceId, automationId, body({ contact: { telegramChatId: '12345' } }));
    expect(result.messages).toEqual([]);
    expect(result.path[0].outcome).toBe('unreachable');
    expect(result.notes).toEqual(['Node "m": no channel of the message reaches the contact; the journey skips it']);
  });

  it('an automation never activated runs its draft by default, and answers 422 for version current', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const draft = { triggers: [], goal: null, graph: { entry: 'w', nodes: [{ id: 'w', type: 'wait', duration: 'P1D', next: 'x' }, { id: 'x', type: 'exit', label: 'Done' }] } };
    const { automationId, draftVersionId } = await createAutomation(db, workspaceId, { draft });
    const result = await simulation.simulate(workspaceId, automationId, body({ startAt: '2026-05-04T10:00:00Z' }));
    expect(result).toMatchObject({ version: null, versionId: draftVersionId, outcome: { status: 'completed', exitReason: 'exit_node', at: '2026-05-05T10:00:00.000Z' } });
    const refused = await failure(simulation.simulate(workspaceId, automationId, body({ version: 'current' })));
    expect(refused.code).toBe('validation_error');
    expect(refused.details).toEqual({ issues: { formErrors: [], fieldErrors: { version: [expect.stringContaining('no published version')] } } });
  });

  it('a draft whose graph has a cycle answers 422 naming the node', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const draft = { graph: { entry: 'a', nodes: [{ id: 'a', type: 'wait', duration: 60, next: 'b' }, { id: 'b', type: 'wait', duration: 60, next: 'a' }] } };
    const { automationId } = await createAutomation(db, workspaceId, { draft });
    const refused = await failure(simulation.simulate(workspaceId, automationId, body({ version: 'draft' })));
    expect(refused.details).toEqual({ issues: { formErrors: [], fieldErrors: { 'graph.nodes[1].next': ['Node "b": next "a" closes a cycle'] } } });
  });

  it('an unknown automation, another workspace\'s, or an unknown contact answers 404; a bad synthetic address 422', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const other = await createTestWorkspace(db);
    const { automationId } = await createAutomation(db, other.workspaceId, { published: { graph: { entry: 'x', nodes: [{ id: 'x', type: 'exit' }] } } });
    expect((await failure(simulation.simulate(workspaceId, randomUUID(), body({})))).code).toBe('not_found');
    expect((await failure(simulation.simulate(workspaceId, automationId, body({})))).message).toBe('Automation not found');
    expect((await failure(simulation.simulate(other.workspaceId, automationId, body({ contactId: randomUUID() })))).message).toBe('Contact not found');
    const bad = await failure(simulation.simulate(other.workspaceId, automationId, body({ contact: { email: 'not an address' } })));
    expect(Object.keys((bad.details.issues as { fieldErrors: Record<string, string[]> }).fieldErrors)).toEqual(['contact.email']);
  });

  it('the body takes a contactId or a contact, not both, and at most 100 events', () => {
    expect(SimulateBody.safeParse({ contactId: randomUUID(), contact: {} }).success).toBe(false);
    const events = Array.from({ length: 101 }, () => ({ event: 'x', at: '2026-05-04T10:00:00Z' }));
    expect(SimulateBody.safeParse({ events }).success).toBe(false);
    expect(SimulateBody.parse({ events: events.slice(1) }).events).toHaveLength(100);
    expect(SimulateBody.safeParse({ version: 'v2' }).success).toBe(false);
  });
});

describe('GET /automations/:id/links (the service)', () => {
  let db: Sequelize;
  beforeAll(() => {
    db = createSequelize(loadConfig(process.env).DATABASE_URL);
  });
  afterAll(() => db.close());

  it('counts the clicks on the automation\'s journey messages only; an unknown automation is 404', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const { automationId } = await createAutomation(db, workspaceId, {});
    const [journey, campaign] = await queueMessages(db, workspaceId, { kind: 'campaign', count: 2, from: 'news@example.com' });
    await db.query(`UPDATE messages SET kind = 'automation', automation_id = $2, enrollment_id = $3 WHERE id = $1`, { bind: [journey, automationId, randomUUID()] });
    for (const messageId of [journey, campaign]) {
      await db.query(
        `INSERT INTO message_links (message_id, position, workspace_id, link_id, url, target, canonical_url, role)
         VALUES ($1, 0, $2, 'l0', 'https://shop.example/a?utm_source=x', 'https://shop.example/a', 'https://shop.example/a', 'cta')`,
        { bind: [messageId, workspaceId] },
      );
      await db.query(
        `INSERT INTO message_events (id, workspace_id, message_id, type, classification, link_url, link_id, link_role)
         VALUES (gen_random_uuid(), $1, $2, 'click', 'human', 'https://shop.example/a', 'l0', 'cta'),
                (gen_random_uuid(), $1, $2, 'click', 'machine', 'https://shop.example/a', 'l0', 'cta')`,
        { bind: [workspaceId, messageId] },
      );
    }
    const links = await createAutomationLinks(db).links(workspaceId, automationId);
    expect(links).toEqual([expect.objectContaining({ canonicalUrl: 'https://shop.example/a', uniqueClicks: 1, totalClicks: 1, machineClicks: 1, role: 'cta' })]);
    await expect(createAutomationLinks(db).links(workspaceId, randomUUID())).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the simulate and links routes over HTTP', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
  });

  it('simulate answers 200 with the run; 422 for a bad body; 404 for another workspace\'s automation; 403 without automations:write', async () => {
    const { workspaceId, call } = await createTestWorkspace(api);
    const { automationId } = await createAutomation(api.db, workspaceId, { published: { graph: { entry: 'w', nodes: [{ id: 'w', type: 'wait', durationMs: DAY, next: null }] } } });
    const run = await call('POST', `/automations/${automationId}/simulate`, { startAt: '2026-05-04T10:00:00Z' });
    expect(run).toMatchObject({ status: 200, body: { outcome: { status: 'completed', exitReason: 'completed', at: '2026-05-05T10:00:00.000Z' }, version: 1, messages: [] } });
    expect((await call('POST', `/automations/${automationId}/simulate`, { contactId: randomUUID(), contact: {} })).status).toBe(422);
    expect((await call('POST', `/automations/${automationId}/simulate`, { contactId: randomUUID() })).body).toMatchObject({ error: 'not_found' });
    const other = await createTestWorkspace(api);
    expect((await api.as(other.apiKey)('POST', `/automations/${automationId}/simulate`, {})).status).toBe(404);
    const { apiKey: reader } = await createTestKey(api, workspaceId, ['automations:read']);
    expect(await api.as(reader)('POST', `/automations/${automationId}/simulate`, {})).toMatchObject({ status: 403, body: { need: 'automations:write' } });
    expect(await api.as(reader)('GET', `/automations/${automationId}/links`)).toMatchObject({ status: 200, body: { data: [] } });
  });
});
