import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { PLANS, periodKey, usagePeriodAt } from '../../core/plans';
import { reserveQuota } from '../../db/repositories/usage';
import { createList, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { type ChatStack, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { receiveMail } from '../helpers/inbox-mail';

type Body = Record<string, unknown>;

/** The spec's 402 body, exactly: no field more or less. */
const quotaBody = (used: number, remaining: number) => ({
  error: 'quota_exceeded',
  message: expect.any(String),
  resource: 'messages',
  limit: 3_000,
  used,
  remaining,
  plan: 'free',
});

describe('usage against the sends made', () => {
  let chat: ChatStack;
  let stack: EmailStack;

  beforeAll(async () => {
    chat = await startChatStack();
    stack = chat.stack;
  });
  afterAll(() => chat?.close());

  const key = () => `usage-${randomUUID()}`;
  const chatId = () => String(100_000 + Math.floor(Math.random() * 1_000_000_000));

  /** A free workspace that can send on every route: a verified domain, a bot, an inbox, a list of `contacts` contacts. */
  async function sender(contacts = 1) {
    const created = await createTestWorkspace(stack, { plan: 'free', domain: true, telegram: chat.telegram });
    const { call, domain } = created;
    const inbox = ((await call('POST', '/inboxes', { domain, localPart: 'support', displayName: 'Support' })).body as { inbox: { id: string; address: string } }).inbox;
    const listId = await createList(call);
    await seedContacts(stack.api.db, created.workspaceId, { count: contacts, prefix: `usage-${created.workspaceId.slice(0, 8)}`, listId });
    return { ...created, call, domain, inbox, listId, from: `Shop <shop@${domain}>` };
  }

  async function spendQuota(workspaceId: string) {
    await stack.api.db.query('INSERT INTO usage_counters (workspace_id, period_start, used) VALUES ($1, $2, 3000)', {
      bind: [workspaceId, periodKey(usagePeriodAt(new Date()))],
    });
  }

  it('the free plan\'s 3,000 spent → every send route answers 402 with exactly { error, message, resource, limit, used, remaining, plan }', async () => {
    const { call, workspaceId, inbox, listId, from } = await sender();
    const { threadId } = await receiveMail(stack.api.db, {
      workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'ann@example.org' },
      to: [inbox.address], subject: 'Question', text: 'Hello?',
    });
    const draft = (await call('POST', `/inboxes/${inbox.id}/drafts`, { to: ['ann@example.org'], subject: 'Draft', text: 'x' })).body as { draftId: string };
    const campaign = ((await call('POST', '/campaigns', { name: 'Q', fromAddress: from, listId, subject: 'S', text: 'T' })).body as { id: string }).id;
    const later = ((await call('POST', '/campaigns', { name: 'Later', fromAddress: from, listId, subject: 'S', text: 'T' })).body as { id: string }).id;
    await spendQuota(workspaceId);

    const refusals: Array<[string, Promise<{ status: number; body: unknown }>]> = [
      ['POST /emails', call('POST', '/emails', { from, to: 'a@example.org', subject: 'S', text: 'T', idempotencyKey: key() })],
      ['POST /messages email', call('POST', '/messages', { channel: 'email', from, to: 'a@example.org', subject: 'S', text: 'T', idempotencyKey: key() })],
      ['POST /messages telegram', call('POST', '/messages', { channel: 'telegram', to: chatId(), text: 'T', idempotencyKey: key() })],
      ['POST /inboxes/:id/send', call('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', subject: 'S', text: 'T' })],
      ['POST /inboxes/:id/threads/:threadId/reply', call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, { text: 'Soon' })],
      ['POST /inboxes/:id/drafts/:draftId/send', call('POST', `/inboxes/${inbox.id}/drafts/${draft.draftId}/send`)],
      ['POST /campaigns/:id/send (now)', sendNow(call, campaign)],
      ['POST /campaigns/:id/send (scheduled)', call('POST', `/campaigns/${later}/send`, { scheduledAt: new Date(Date.now() + 86_400_000).toISOString() })],
    ];
    for (const [route, answer] of refusals) {
      const { status, body } = await answer;
      expect({ route, status, body }).toEqual({ route, status: 402, body: quotaBody(3_000, 0) });
    }

    const batch = await call('POST', '/emails/batch', { emails: [{ from, to: 'a@example.org', subject: 'S', text: 'T', idempotencyKey: key() }] });
    expect(batch).toMatchObject({ status: 207, body: { accepted: 0, failed: 1 } });
    const [item] = (batch.body as { results: Array<{ error: unknown }> }).results;
    const { error, message, ...figures } = quotaBody(3_000, 0);
    expect(item.error).toEqual({ code: error, message, ...figures });
  });

  it('a known mix of sends → GET /usage used, byChannel, byKind and today\'s row count exactly them; a refused send and a repeat count nothing', async () => {
    const { call, workspaceId, inbox, listId, from } = await sender(4);
    const period = usagePeriodAt(new Date());
    // Sends of earlier in the month, so the refused one below passes the plan.
    await reserveQuota(stack.api.db, workspaceId, PLANS.free, period, 2_980, { channel: 'email', kind: 'transactional' });

    const first = { from, to: 'one@example.org', subject: 'S', text: 'T', idempotencyKey: key() };
    expect((await call('POST', '/emails', first)).status).toBe(202);
    expect((await call('POST', '/emails', { from, to: ['a@example.org', 'b@example.org'], cc: 'c@example.org', subject: 'S', text: 'T', idempotencyKey: key() })).status).toBe(202);
    const batch = await call('POST', '/emails/batch', {
      emails: [
        { from, to: 'd@example.org', subject: 'S', text: 'T', idempotencyKey: key() },
        { from, to: ['e@example.org', 'f@example.org'], subject: 'S', text: 'T', idempotencyKey: key() },
      ],
    });
    expect(batch.body).toMatchObject({ accepted: 2, failed: 0 });
    expect((await call('POST', '/messages', { channel: 'telegram', to: chatId(), text: 'Hi', idempotencyKey: key() })).status).toBe(202);
    expect((await call('POST', `/inboxes/${inbox.id}/send`, { to: 'g@example.org', subject: 'S', text: 'T' })).status).toBe(202);
    const campaign = ((await call('POST', '/campaigns', { name: 'Four', fromAddress: from, listId, subject: 'S', text: 'T' })).body as { id: string }).id;
    expect((await sendNow(call, campaign)).status).toBe(202);
    await waitForCampaign(call, campaign, ['sent']);

    // 2,980 + 1 + 3 + 3 + 1 (telegram) + 1 (inbox) + 4 (campaign) = 2,993: seven left, so eight recipients are refused.
    const eight = Array.from({ length: 8 }, (_, i) => `r${i}@example.org`);
    expect(await call('POST', '/emails', { from, to: eight, subject: 'S', text: 'T', idempotencyKey: key() })).toEqual(
      expect.objectContaining({ status: 402, body: quotaBody(2_993, 7) }),
    );
    expect(await call('POST', '/emails', first)).toMatchObject({ status: 200, body: { status: 'duplicate' } });

    const usage = (await call('GET', '/usage')).body as Body & { messages: Body; daily: Array<{ date: string }> };
    expect(usage.messages).toMatchObject({
      limit: 3_000,
      used: 2_993,
      remaining: 7,
      byChannel: { email: 2_992, whatsapp: 0, telegram: 1 },
      byKind: { transactional: 2_988, campaign: 4, automation: 0, inbox: 1 },
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.daily.find((day) => day.date === today)).toEqual({ date: today, messages: 2_993, byChannel: { email: 2_992, whatsapp: 0, telegram: 1 } });

    const [ledger] = await stack.api.db.query<{ used: string; days: string }>(
      `SELECT (SELECT used FROM usage_counters WHERE workspace_id = $1 AND period_start = $2) AS used,
              (SELECT sum(messages) FROM usage_daily WHERE workspace_id = $1) AS days`,
      { bind: [workspaceId, periodKey(period)], type: QueryTypes.SELECT },
    );
    expect(ledger).toEqual({ used: '2993', days: '2993' });
  });

  it('a campaign canceled before its recipients are written gives their units back from the day and kind they were counted on', async () => {
    const { call, workspaceId, listId, from } = await sender(3);
    const campaign = ((await call('POST', '/campaigns', { name: 'Stop', fromAddress: from, listId, subject: 'S', text: 'T' })).body as { id: string }).id;
    expect((await sendNow(call, campaign)).status).toBe(202);
    await call('POST', `/campaigns/${campaign}/pause`);
    await call('POST', `/campaigns/${campaign}/cancel`);
    await waitForCampaign(call, campaign, ['canceled', 'sent']);
    const usage = (await call('GET', '/usage')).body as { messages: { used: number; byKind: Record<string, number>; byChannel: Record<string, number> }; daily: Array<{ messages: number }> };
    expect(usage.messages.byKind.campaign).toBe(usage.messages.used);
    expect(usage.messages.byChannel.email).toBe(usage.messages.used);
    expect(usage.daily.reduce((sum, day) => sum + day.messages, 0)).toBe(usage.messages.used);
    const [row] = await stack.api.db.query<{ sent: string }>(
      "SELECT count(*) AS sent FROM messages WHERE workspace_id = $1 AND status NOT IN ('canceled')",
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    expect(usage.messages.used).toBe(Number(row.sent));
  });
});
