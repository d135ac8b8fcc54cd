import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { webhookBody } from '../../core/webhook-payloads';
import { insertContactEvent } from '../../db/repositories/contact-events';
import { insertIdentities } from '../../db/repositories/contact-identities';
import { insertContact } from '../../db/repositories/contacts';
import { findEventSource } from '../../db/repositories/webhook-attempts';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

/** An automation with one published version, as the automations API writes them (migration 0020). */
async function createAutomation(db: Sequelize, workspaceId: string, name: string): Promise<{ automationId: string; versionId: string }> {
  const automationId = randomUUID();
  const versionId = randomUUID();
  const graph = { entry: 'x', nodes: [{ id: 'x', type: 'exit' }] };
  await db.query(
    `INSERT INTO automations (id, workspace_id, name, status, draft, draft_version_id, current_version_id)
     VALUES ($1, $2, $3, 'active', $4::jsonb, $5, $6)`,
    { bind: [automationId, workspaceId, name, JSON.stringify({ graph }), randomUUID(), versionId] },
  );
  await db.query('INSERT INTO automation_versions (id, workspace_id, automation_id, version, graph) VALUES ($1, $2, $3, 1, $4::jsonb)', {
    bind: [versionId, workspaceId, automationId, JSON.stringify(graph)],
  });
  return { automationId, versionId };
}

interface EnrollmentRow {
  status: 'active' | 'completed' | 'exited';
  enteredAt: string;
  exitedAt?: string;
  exitReason?: string;
  current?: { nodeId: string; nodeType: string; nodeLabel: string; since: string };
}

/** An enrollment as the journey workflow leaves it. */
async function createEnrollment(db: Sequelize, workspaceId: string, contactId: string, automation: { automationId: string; versionId: string }, row: EnrollmentRow): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO enrollments (id, workspace_id, automation_id, version_id, contact_id, status, source, current_node_id, current_node_type,
       current_node_label, current_since, exit_reason, entered_at, exited_at, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'contacts', $7, $8, $9, $10, $11, $12, $13, $12)`,
    {
      bind: [
        id, workspaceId, automation.automationId, automation.versionId, contactId, row.status, row.current?.nodeId ?? null, row.current?.nodeType ?? null,
        row.current?.nodeLabel ?? null, row.current?.since ?? null, row.exitReason ?? null, row.enteredAt, row.exitedAt ?? null,
      ],
    },
  );
  return id;
}

describe('journeys seen from a contact and its messages', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  async function contactOf(workspaceId: string): Promise<string> {
    return api.db.transaction(async (transaction) => {
      const contact = await insertContact(api.db, workspaceId, { firstName: 'Ada' }, transaction);
      await insertIdentities(api.db, workspaceId, contact.id, [{ channel: 'email', address: `ada-${randomUUID().slice(0, 6)}@example.com`, consent: 'opted_in', verified: true, isPrimary: true }], transaction);
      return contact.id;
    });
  }

  /** A journey message of the enrollment, accepted at `at` (as the journey's message node writes it). */
  async function journeyMessage(workspaceId: string, contactId: string, automationId: string, enrollmentId: string, at: string): Promise<string> {
    const [id] = await queueMessages(api.db, workspaceId, { kind: 'automation', count: 1, from: 'hello@example.com' });
    await api.db.query(
      `UPDATE messages SET contact_id = $2, automation_id = $3, enrollment_id = $4, journey_node_id = 'welcome', subject = 'Welcome aboard', created_at = $5 WHERE id = $1`,
      { bind: [id, contactId, automationId, enrollmentId, at] },
    );
    return id;
  }

  it('the journey merges enrollments (entered, current, exited) and journey messages with the events, newest first, paging back with before', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const contactId = await contactOf(workspaceId);
    const onboarding = await createAutomation(api.db, workspaceId, 'Onboarding');
    const winback = await createAutomation(api.db, workspaceId, 'Win-back');
    await createEnrollment(api.db, workspaceId, contactId, winback, {
      status: 'exited', enteredAt: '2026-01-01T00:00:00Z', exitedAt: '2026-01-03T00:00:00Z', exitReason: 'goal_reached',
    });
    const active = await createEnrollment(api.db, workspaceId, contactId, onboarding, {
      status: 'active', enteredAt: '2026-02-01T00:00:00Z', current: { nodeId: 'wait-2', nodeType: 'wait', nodeLabel: 'Two days', since: '2026-02-01T00:05:00Z' },
    });
    const messageId = await journeyMessage(workspaceId, contactId, onboarding.automationId, active, '2026-02-01T00:00:01Z');
    await insertContactEvent(api.db, workspaceId, { contactId, name: 'signed_up', occurredAt: new Date('2026-01-15T00:00:00Z') });

    const journey = await api.as(apiKey)('GET', `/contacts/${contactId}/journey`);
    expect(journey.status).toBe(200);
    const base = { automationId: onboarding.automationId, automationName: 'Onboarding', enrollmentId: active };
    expect((journey.body as { data: unknown[] }).data).toEqual([
      { type: 'enrollment', at: '2026-02-01T00:05:00.000Z', phase: 'current', status: 'active', nodeId: 'wait-2', nodeType: 'wait', nodeLabel: 'Two days', ...base, test: false },
      {
        type: 'message_sent', at: '2026-02-01T00:00:01.000Z', kind: 'automation', messageId, channel: 'email', subject: 'Welcome aboard', status: 'queued',
        enrollmentId: active, automationId: onboarding.automationId, nodeId: 'welcome', nodeType: 'message', nodeLabel: 'Welcome aboard', test: false,
        events: { openedHuman: 0, openedMachine: 0, clicks: 0, contentClicks: 0, links: [], lastLinkUrl: null, bounced: false, unsubscribed: false },
      },
      { type: 'enrollment', at: '2026-02-01T00:00:00.000Z', phase: 'entered', status: 'active', ...base, test: false },
      { type: 'touch', at: '2026-01-15T00:00:00.000Z', kind: 'event', name: 'signed_up', test: false },
      {
        type: 'enrollment', at: '2026-01-03T00:00:00.000Z', phase: 'exited', status: 'exited', exitReason: 'goal_reached',
        automationId: winback.automationId, automationName: 'Win-back', enrollmentId: expect.any(String), test: false,
      },
      { type: 'enrollment', at: '2026-01-01T00:00:00.000Z', phase: 'entered', status: 'exited', automationId: winback.automationId, automationName: 'Win-back', enrollmentId: expect.any(String), test: false },
    ]);

    const older = await api.as(apiKey)('GET', `/contacts/${contactId}/journey?limit=2&before=2026-02-01T00:00:01.000Z`);
    expect((older.body as { data: Array<{ type: string; phase?: string }> }).data.map((entry) => [entry.type, entry.phase])).toEqual([
      ['enrollment', 'entered'],
      ['touch', undefined],
    ]);
  });

  it('a completed enrollment shows entered and exited with its reason, and no current entry', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const contactId = await contactOf(workspaceId);
    const automation = await createAutomation(api.db, workspaceId, 'Welcome');
    await createEnrollment(api.db, workspaceId, contactId, automation, {
      status: 'completed', enteredAt: '2026-03-01T00:00:00Z', exitedAt: '2026-03-04T00:00:00Z', exitReason: 'exit_node',
      current: { nodeId: 'bye', nodeType: 'exit', nodeLabel: 'exit', since: '2026-03-04T00:00:00Z' },
    });
    const journey = await api.as(apiKey)('GET', `/contacts/${contactId}/journey`);
    expect((journey.body as { data: Array<Record<string, unknown>> }).data.map((entry) => [entry.phase, entry.at, entry.exitReason])).toEqual([
      ['exited', '2026-03-04T00:00:00.000Z', 'exit_node'],
      ['entered', '2026-03-01T00:00:00.000Z', undefined],
    ]);
  });

  it('another workspace\'s enrollments of the same contact id never show', async () => {
    const mine = await createTestWorkspace(api);
    const contactId = await contactOf(mine.workspaceId);
    const other = await createTestWorkspace(api);
    const theirContact = await contactOf(other.workspaceId);
    const automation = await createAutomation(api.db, other.workspaceId, 'Theirs');
    await createEnrollment(api.db, other.workspaceId, theirContact, automation, { status: 'active', enteredAt: '2026-03-01T00:00:00Z' });
    expect((await api.as(mine.apiKey)('GET', `/contacts/${contactId}/journey`)).body).toEqual({ data: [], nextCursor: null });
    expect((await api.as(mine.apiKey)('GET', `/contacts/${theirContact}/journey`)).status).toBe(404);
  });

  it('GET /emails/:id and a webhook event of a journey message carry its enrollmentId and automationId', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const contactId = await contactOf(workspaceId);
    const automation = await createAutomation(api.db, workspaceId, 'Onboarding');
    const enrollmentId = await createEnrollment(api.db, workspaceId, contactId, automation, { status: 'active', enteredAt: '2026-03-01T00:00:00Z' });
    const messageId = await journeyMessage(workspaceId, contactId, automation.automationId, enrollmentId, '2026-03-01T00:00:00Z');

    const status = await api.as(apiKey)('GET', `/emails/${messageId}`);
    expect(status.body).toMatchObject({ id: messageId, kind: 'automation', enrollmentId, automationId: automation.automationId, contactId });

    const eventId = randomUUID();
    await api.db.query(`INSERT INTO message_events (id, workspace_id, message_id, type) VALUES ($1, $2, $3, 'delivered')`, { bind: [eventId, workspaceId, messageId] });
    const source = await findEventSource(api.db, workspaceId, {
      deliveryId: randomUUID(), webhookId: randomUUID(), event: 'email.delivered', status: 'pending', run: 1, body: null,
      messageEventId: eventId, platformEventId: null, url: 'https://hooks.example/', enabled: true, secretSealed: '', previousSecretSealed: null,
    });
    expect(source).not.toBeNull();
    expect(webhookBody('email.delivered', source as NonNullable<typeof source>).data).toMatchObject({
      emailId: messageId, kind: 'automation', enrollmentId, automationId: automation.automationId, contactId,
    });
  });

  it('a message that is not a journey\'s shows automationId null', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const [messageId] = await queueMessages(api.db, workspaceId, { kind: 'transactional', count: 1, from: 'hello@example.com' });
    expect((await api.as(apiKey)('GET', `/emails/${messageId}`)).body).toMatchObject({ enrollmentId: null, automationId: null });
  });
});
