import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { saveDomainCheck } from '../../db/repositories/domains';
import { createList, sendNow } from '../helpers/campaigns';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { expectStatus, until } from '../helpers/polling';

// Sender authorization (issue 29): no workspace sends as a domain it has not verified, on any path. The API
// refuses such senders (journeys with a 422 naming the node), and delivery refuses them again, so a domain
// that lost its verification, or a message that reached the outbox some other way, never leaves unsigned.
jest.setTimeout(120_000);

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', DOMAIN_CACHE_TTL_MS: '0' } });
});
afterAll(() => stack.close());

type Call = ReturnType<EmailStack['api']['as']>;
type Answer = { status: number; body: Record<string, unknown> };

async function answer(response: Promise<{ status: number; body: unknown }>): Promise<Answer> {
  const { status, body } = await response;
  return { status, body: body as Record<string, unknown> };
}

/** A workspace with a verified domain (no default sender unless asked) and an email template. */
async function workspace(options: { defaultSender?: boolean } = {}) {
  const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const [listed] = (await expectStatus(call('GET', '/domains'), 200)).domains as Array<{ id: string }>;
  if (options.defaultSender) await expectStatus(call('PATCH', `/domains/${listed.id}`, { defaultFromAddress: `hello@${domain}` }), 200);
  const template = (await expectStatus(call('POST', '/templates', { name: `t-${randomUUID()}`, format: 'html', subject: 'Hi', body: '<p>Hi</p>' }), 201)).id as string;
  return { workspaceId, call, domain, domainId: listed.id, template };
}

const journey = (template: string, from?: string, extra: Record<string, unknown> = {}) => ({
  name: 'Welcome',
  trigger: { event: 'signed_up' },
  graph: {
    entry: 'hello',
    nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: template }, ...(from && { from }), ...extra, next: null }],
  },
});

/** The fields a 422 names. */
const fieldsOf = (body: Record<string, unknown>) => Object.keys((body.error as { fieldErrors?: Record<string, unknown> }).fieldErrors ?? {});

async function lapse(workspaceId: string, domainId: string): Promise<void> {
  await saveDomainCheck(stack.api.db, workspaceId, domainId, { status: 'failed', detail: 'records removed', recordChecks: [] });
}

async function messageRow(workspaceId: string, id: string) {
  const [row] = await stack.api.db.query<{ status: string; reasons: string[] }>(
    `SELECT m.status, array_remove(array_agg(e.reason), NULL) AS reasons FROM messages m
     LEFT JOIN message_events e ON e.message_id = m.id AND e.workspace_id = m.workspace_id AND e.type = 'failed'
     WHERE m.workspace_id = $1 AND m.id = $2 GROUP BY m.status`,
    { bind: [workspaceId, id], type: QueryTypes.SELECT },
  );
  return row;
}

const mailFrom = (domain: string) => stack.sink.received.filter((mail) => mail.raw.includes(`@${domain}`));

describe('the API refuses a sender the workspace has not verified, on every path', () => {
  it("another workspace's verified domain is refused by emails, the batch, messages, campaigns and inboxes", async () => {
    const victim = await workspace();
    const attacker = await workspace();
    const spoofed = `ceo@${victim.domain}`;
    const call: Call = attacker.call;

    const single = await answer(call('POST', '/emails', { from: spoofed, to: 'someone@example.org', subject: 'Hi', text: 'x', idempotencyKey: randomUUID() }));
    expect(single).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });
    const batch = await answer(call('POST', '/emails/batch', { emails: [{ from: spoofed, to: 'someone@example.org', subject: 'Hi', text: 'x', idempotencyKey: randomUUID() }] }));
    expect(batch.status).toBe(207);
    expect(JSON.stringify(batch.body)).toContain('domain_not_verified');
    const unified = await answer(call('POST', '/messages', { channel: 'email', from: spoofed, to: 'someone@example.org', subject: 'Hi', text: 'x', idempotencyKey: randomUUID() }));
    expect(unified).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });

    const listId = await createList(call);
    const campaign = await expectStatus(call('POST', '/campaigns', { name: 'c', fromAddress: spoofed, listId, subject: 'Hi', text: 'x' }), 201);
    expect(await sendNow(call, campaign.id as string)).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });

    const inbox = await answer(call('POST', '/inboxes', { domain: victim.domain, localPart: 'ceo' }));
    expect(inbox).toMatchObject({ status: 422, body: { error: { fieldErrors: { domain: [`No domain ${victim.domain} in this workspace`] } } } });
    expect(mailFrom(victim.domain)).toHaveLength(0);
  });

  it("a journey message node sending as another workspace's domain is refused at create and update with a 422 on graph.nodes[0].from", async () => {
    const victim = await workspace();
    const attacker = await workspace();
    const created = await answer(attacker.call('POST', '/automations', journey(attacker.template, `ceo@${victim.domain}`)));
    expect(created.status).toBe(422);
    expect(fieldsOf(created.body)).toEqual(['graph.nodes[0].from']);
    expect(JSON.stringify(created.body)).toContain(`${victim.domain} is not verified`);

    const unverified = await answer(attacker.call('POST', '/automations', journey(attacker.template, `ceo@nobody-${randomUUID().slice(0, 8)}.example.net`)));
    expect(fieldsOf(unverified.body)).toEqual(['graph.nodes[0].from']);

    const own = await expectStatus(attacker.call('POST', '/automations', journey(attacker.template, `news@${attacker.domain}`)), 201);
    const updated = await answer(attacker.call('PATCH', `/automations/${own.id as string}`, { graph: journey(attacker.template, `ceo@${victim.domain}`).graph }));
    expect(updated.status).toBe(422);
    expect(fieldsOf(updated.body)).toEqual(['graph.nodes[0].from']);
  });
});

describe('a journey that cannot send is refused at activation', () => {
  it('an email message node with no from, in a workspace without a default sender, answers 422 naming the node', async () => {
    const { call, template } = await workspace();
    const draft = await expectStatus(call('POST', '/automations', journey(template)), 201);
    const activated = await answer(call('POST', `/automations/${draft.id as string}/activate`));
    expect(activated.status).toBe(422);
    expect(fieldsOf(activated.body)).toEqual(['graph.nodes[0].from']);
    expect(JSON.stringify(activated.body)).toContain('Node \\"hello\\": no sender');
  });

  it('the same node activates once a verified domain has a default sender', async () => {
    const { call, template } = await workspace({ defaultSender: true });
    const draft = await expectStatus(call('POST', '/automations', journey(template)), 201);
    await expectStatus(call('POST', `/automations/${draft.id as string}/activate`), 200);
  });

  it("a sender whose domain lost its verification after the draft was saved cannot be activated", async () => {
    const { workspaceId, call, domain, domainId, template } = await workspace();
    const draft = await expectStatus(call('POST', '/automations', journey(template, `news@${domain}`)), 201);
    await lapse(workspaceId, domainId);
    const activated = await answer(call('POST', `/automations/${draft.id as string}/activate`));
    expect(activated.status).toBe(422);
    expect(fieldsOf(activated.body)).toEqual(['graph.nodes[0].from']);
  });

  it('a deleted template or a deleted attachment stops activation, naming the node and field', async () => {
    const { call, domain, template } = await workspace();
    const file = await expectStatus(call('POST', '/attachments', { filename: 'a.txt', content: Buffer.from('hello').toString('base64') }), 201);
    const fileId = (file.id ?? (file.attachment as { id: string }).id) as string;
    const draft = await expectStatus(call('POST', '/automations', journey(template, `news@${domain}`, { attachmentIds: [fileId] })), 201);
    await expectStatus(call('DELETE', `/templates/${template}`), 200);
    await expectStatus(call('DELETE', `/attachments/${fileId}`), 200);
    const activated = await answer(call('POST', `/automations/${draft.id as string}/activate`));
    expect(activated.status).toBe(422);
    expect(fieldsOf(activated.body).sort()).toEqual(['graph.nodes[0].attachmentIds[0]', 'graph.nodes[0].templateByChannel.email']);
  });

  it("a live automation's template and attachment cannot be deleted (409); once it is archived they can", async () => {
    const { call, domain, template } = await workspace();
    const file = await expectStatus(call('POST', '/attachments', { filename: 'a.txt', content: Buffer.from('hello').toString('base64') }), 201);
    const fileId = (file.id ?? (file.attachment as { id: string }).id) as string;
    const draft = await expectStatus(call('POST', '/automations', journey(template, `news@${domain}`, { attachmentIds: [fileId] })), 201);
    await expectStatus(call('POST', `/automations/${draft.id as string}/activate`), 200);
    expect(await answer(call('DELETE', `/templates/${template}`))).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await answer(call('DELETE', `/attachments/${fileId}`))).toMatchObject({ status: 409, body: { error: 'conflict' } });
    await expectStatus(call('POST', `/automations/${draft.id as string}/archive`), 200);
    await expectStatus(call('DELETE', `/templates/${template}`), 200);
    await expectStatus(call('DELETE', `/attachments/${fileId}`), 200);
  });
});

describe('delivery refuses a sender the workspace does not own', () => {
  it("messages from another workspace's domain or an unverified one fail with sender_not_authorized and never reach the provider", async () => {
    const victim = await workspace();
    const attacker = await workspace();
    const stranger = `nobody-${randomUUID().slice(0, 8)}.example.net`;
    const ids = [
      ...(await queueMessages(stack.api.db, attacker.workspaceId, { kind: 'transactional', count: 1, from: `CEO <ceo@${victim.domain}>` })),
      ...(await queueMessages(stack.api.db, attacker.workspaceId, { kind: 'campaign', count: 1, from: `ceo@${victim.domain}`, campaignId: randomUUID() })),
      ...(await queueMessages(stack.api.db, attacker.workspaceId, { kind: 'automation', count: 1, from: `hi@${stranger}` })),
    ];
    for (const id of ids) {
      const row = await until('the message fails', () => messageRow(attacker.workspaceId, id), (found) => found?.status === 'failed');
      expect(row.reasons.join(' ')).toMatch(/^sender_not_authorized: the domain .* is not a verified domain of this workspace$/);
    }
    expect(mailFrom(victim.domain)).toHaveLength(0);
    expect(mailFrom(stranger)).toHaveLength(0);
  });

  it('a journey whose domain lost its verification after activation fails its message at delivery, and sends nothing', async () => {
    const { workspaceId, call, domain, domainId, template } = await workspace();
    const draft = await expectStatus(call('POST', '/automations', journey(template, `news@${domain}`)), 201);
    await expectStatus(call('POST', `/automations/${draft.id as string}/activate`), 200);
    await lapse(workspaceId, domainId);
    const contact = `c-${randomUUID().slice(0, 8)}@example.org`;
    await expectStatus(call('POST', '/events', { event: 'signed_up', email: contact }), 202);
    const [message] = await until(
      'the journey message fails',
      () => stack.api.db.query<{ id: string; status: string }>(`SELECT id, status FROM messages WHERE workspace_id = $1 AND kind = 'automation'`, { bind: [workspaceId], type: QueryTypes.SELECT }),
      (rows) => rows[0]?.status === 'failed',
    );
    expect((await messageRow(workspaceId, message.id)).reasons[0]).toContain(`sender_not_authorized: the domain ${domain}`);
    expect(stack.sink.received.filter((mail) => mail.recipients.includes(contact))).toHaveLength(0);
  });
});
