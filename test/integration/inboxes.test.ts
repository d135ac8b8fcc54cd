import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { periodKey, usagePeriodAt } from '../../core/plans';
import { DERIVED_KEY_WINDOW_MS, derivedSendKeys } from '../../core/inbox/send-keys';
import { findMailbox, listEmailRules } from '../../db/repositories/inbox-mail';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { receiveMail } from '../helpers/inbox-mail';

/**
 * The inbox and rules API through HTTP on the real database (no workers: what a send becomes after
 * acceptance is test/integration/inbox-outbound.test.ts).
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
});
afterAll(() => api.close());

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const body = <T = Record<string, unknown>>(response: ApiResponse) => response.body as T;

async function workspaceWithDomain(): Promise<{ call: Call; workspaceId: string; domain: string; domainId: string }> {
  const { workspaceId, apiKey, domain } = await createTestWorkspace(api, { plan: 'pro', domain: true });
  const [{ id: domainId }] = await api.db.query<{ id: string }>('SELECT id FROM domains WHERE workspace_id = $1 AND name = $2', {
    bind: [workspaceId, domain],
    type: QueryTypes.SELECT,
  });
  return { call: api.as(apiKey), workspaceId, domain, domainId };
}

async function inboxOf(call: Call, domain: string, localPart = 'support'): Promise<{ id: string; address: string }> {
  const created = await call('POST', '/inboxes', { domain, localPart, displayName: 'Support Team' });
  expect(created.status).toBe(201);
  return body<{ inbox: { id: string; address: string } }>(created).inbox;
}

describe('inboxes', () => {
  it('created on a verified domain by name or id → 201 with its address; listed, read, renamed, disabled and deleted', async () => {
    const { call, domain, domainId } = await workspaceWithDomain();
    const byName = await call('POST', '/inboxes', { domain: domain.toUpperCase(), localPart: 'Sales', displayName: 'Sales' });
    expect(byName).toMatchObject({ status: 201, body: { inbox: { localPart: 'Sales', address: `Sales@${domain}`, displayName: 'Sales', status: 'active', domainId, inboundEnabled: false } } });
    const id = body<{ inbox: { id: string } }>(byName).inbox.id;
    const byId = await call('POST', '/inboxes', { domainId, localPart: 'help' });
    expect(byId).toMatchObject({ status: 201, body: { inbox: { address: `help@${domain}`, displayName: null } } });

    expect(body<{ inboxes: Array<{ localPart: string }> }>(await call('GET', '/inboxes')).inboxes.map((inbox) => inbox.localPart)).toEqual(['help', 'Sales']);
    expect(await call('GET', `/inboxes/${id}`)).toMatchObject({ status: 200, body: { inbox: { id } } });
    expect(await call('PATCH', `/inboxes/${id}`, { displayName: 'Sales desk', status: 'disabled' })).toMatchObject({
      status: 200,
      body: { inbox: { displayName: 'Sales desk', status: 'disabled' } },
    });
    expect(await call('PATCH', `/inboxes/${id}`, { displayName: null })).toMatchObject({ status: 200, body: { inbox: { displayName: null, status: 'disabled' } } });
    expect(await call('DELETE', `/inboxes/${id}`)).toMatchObject({ status: 200, body: { inbox: { id } } });
    expect(await call('GET', `/inboxes/${id}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('a second inbox of the same address in another case → 409 conflict with the first id', async () => {
    const { call, domain } = await workspaceWithDomain();
    const first = await inboxOf(call, domain, 'billing');
    expect(await call('POST', '/inboxes', { domain, localPart: 'BILLING' })).toMatchObject({ status: 409, body: { error: 'conflict', id: first.id } });
  });

  it('a domain that is not verified → 403 domain_not_verified; an unknown one, bad local parts, both or neither domain fields → 422 by field', async () => {
    const { call, workspaceId, domain, domainId } = await workspaceWithDomain();
    await api.db.query("UPDATE domains SET status = 'pending' WHERE workspace_id = $1 AND id = $2", { bind: [workspaceId, domainId] });
    expect(await call('POST', '/inboxes', { domainId, localPart: 'a' })).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });
    expect(await call('POST', '/inboxes', { domain: 'nowhere.example.net', localPart: 'a' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { domain: [expect.any(String)] } } },
    });
    for (const [input, field] of [
      [{ domain, localPart: 'two words' }, 'localPart'],
      [{ domain, localPart: 'a'.repeat(65) }, 'localPart'],
      [{ domain, localPart: '.dot' }, 'localPart'],
      [{ domain, domainId, localPart: 'a' }, 'domainId'],
      [{ localPart: 'a' }, 'domainId'],
      [{ domain, localPart: 'a', displayName: 'Line\nbreak' }, 'displayName'],
    ] as const) {
      const response = await call('POST', '/inboxes', input);
      expect({ input, status: response.status, fields: Object.keys(body<{ error: { fieldErrors: object } }>(response).error.fieldErrors ?? {}) }).toEqual({
        input,
        status: 422,
        fields: [field],
      });
    }
  });

  it('an active inbox is what the SMTP listener accepts mail for; disabled or deleted, its address is unknown (550)', async () => {
    const { call, workspaceId, domain, domainId } = await workspaceWithDomain();
    await api.db.query('UPDATE domains SET inbound_enabled = true WHERE id = $1', { bind: [domainId] });
    const inbox = await inboxOf(call, domain, 'Hello');
    expect(await findMailbox(api.db, 'hello', domain)).toEqual({ kind: 'inbox', workspaceId, inboxId: inbox.id });
    await call('PATCH', `/inboxes/${inbox.id}`, { status: 'disabled' });
    expect(await findMailbox(api.db, 'hello', domain)).toEqual({ kind: 'unknown_mailbox' });
    await call('DELETE', `/inboxes/${inbox.id}`);
    expect(await findMailbox(api.db, 'hello', domain)).toEqual({ kind: 'unknown_mailbox' });
  });

  it('deleting an inbox removes its threads, messages and counters', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    await receiveMail(api.db, { workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'a@example.org' }, to: [inbox.address], subject: 'Hi', text: 'Hi' });
    await call('DELETE', `/inboxes/${inbox.id}`);
    const counts = await api.db.query<{ threads: string; messages: string; counters: string }>(
      `SELECT (SELECT count(*) FROM threads WHERE inbox_id = $1) AS threads, (SELECT count(*) FROM inbox_messages WHERE inbox_id = $1) AS messages,
              (SELECT count(*) FROM inbox_daily_counters WHERE inbox_id = $1) AS counters`,
      { bind: [inbox.id], type: QueryTypes.SELECT },
    );
    expect(counts[0]).toEqual({ threads: '0', messages: '0', counters: '0' });
  });

  it('scopes: inbox:read reads but cannot create (403 need inbox:write); sending needs inbox:send', async () => {
    const { workspaceId, domain } = await workspaceWithDomain();
    const reader = api.as((await createTestKey(api, workspaceId, ['inbox:read'])).apiKey);
    expect((await reader('GET', '/inboxes')).status).toBe(200);
    expect(await reader('POST', '/inboxes', { domain, localPart: 'x' })).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'inbox:write' } });
    const writer = api.as((await createTestKey(api, workspaceId, ['inbox:write'])).apiKey);
    const inbox = await inboxOf(writer, domain);
    expect(await writer('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', subject: 'S', text: 'T' })).toMatchObject({
      status: 403,
      body: { need: 'inbox:send' },
    });
  });
});

describe('threads and drafts', () => {
  it('threads by folder, newest activity first, paged by cursor; a thread reads with its messages and is marked read', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const threads: string[] = [];
    for (let i = 0; i < 3; i++) {
      const mail = await receiveMail(api.db, {
        workspaceId, inboxId: inbox.id, messageIdHeader: `m${i}-${randomUUID()}@example.org`, from: { address: `c${i}@example.org`, name: `C ${i}` },
        to: [inbox.address], subject: `Question ${i}`, text: `Body ${i}`,
      });
      threads.push(mail.threadId);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const first = await call('GET', `/inboxes/${inbox.id}/threads?limit=2`);
    expect(first).toMatchObject({ status: 200, body: { folder: 'inbox', nextCursor: expect.any(String) } });
    const page1 = body<{ threads: Array<{ id: string }>; nextCursor: string }>(first);
    expect(page1.threads.map((thread) => thread.id)).toEqual([threads[2], threads[1]]);
    const page2 = body<{ threads: Array<{ id: string }>; nextCursor: string | null }>(await call('GET', `/inboxes/${inbox.id}/threads?limit=2&cursor=${page1.nextCursor}`));
    expect(page2).toEqual({ folder: 'inbox', threads: [expect.objectContaining({ id: threads[0] })], nextCursor: null });
    expect(body(await call('GET', `/inboxes/${inbox.id}/threads?folder=sent`))).toEqual({ folder: 'sent', threads: [], nextCursor: null });

    const detail = await call('GET', `/inboxes/${inbox.id}/threads/${threads[0]}`);
    expect(detail).toMatchObject({
      status: 200,
      body: {
        thread: { id: threads[0], subject: 'Question 0', unreadCount: 1, messageCount: 1 },
        messages: [{ direction: 'in', status: 'processed', from: 'C 0 <c0@example.org>', to: [inbox.address], text: 'Body 0', replyText: 'Body 0', auth: { dmarc: { result: 'pass' } }, malformed: false }],
      },
    });
    expect(body<{ thread: { unreadCount: number } }>(await call('GET', `/inboxes/${inbox.id}/threads/${threads[0]}`)).thread.unreadCount).toBe(0);

    expect(await call('GET', `/inboxes/${inbox.id}/threads?cursor=nonsense`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { cursor: [expect.any(String)] } } } });
    expect(await call('GET', `/inboxes/${inbox.id}/threads?folder=spam`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { folder: [expect.any(String)] } } } });
    expect(await call('GET', `/inboxes/${inbox.id}/threads/${randomUUID()}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('a received file → a signed URL that serves its bytes; an index past the list, or a file of ours, → 404', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const blobs = createBlobStore(blobStoreOptions(api.config));
    try {
      await blobs.ensureBucket();
      const blobKey = `inbound/${workspaceId}/${randomUUID()}/attachments/0`;
      await blobs.put(blobKey, Buffer.from('PDF bytes'), 'application/pdf');
      const attachment = { index: 0, filename: 'quote.pdf', contentType: 'application/pdf', size: 9, contentId: null, inline: false, blobKey };
      const { id, threadId } = await receiveMail(api.db, {
        workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'a@example.org' }, to: [inbox.address],
        subject: 'Quote', text: 'Attached', attachments: [attachment],
      });
      const detail = body<{ messages: Array<{ attachments: unknown[] }> }>(await call('GET', `/inboxes/${inbox.id}/threads/${threadId}`));
      // The blob key is ours: listed as metadata only.
      expect(detail.messages[0].attachments).toEqual([{ id: null, filename: 'quote.pdf', contentType: 'application/pdf', size: 9, contentId: null }]);
      const download = await call('GET', `/inboxes/${inbox.id}/messages/${id}/attachments/0`);
      expect(download).toMatchObject({ status: 200, body: { attachment: { index: 0, filename: 'quote.pdf', contentType: 'application/pdf', size: 9 } } });
      const file = await fetch(body<{ downloadUrl: string }>(download).downloadUrl);
      expect([file.status, Buffer.from(await file.arrayBuffer()).toString()]).toEqual([200, 'PDF bytes']);
      expect(await call('GET', `/inboxes/${inbox.id}/messages/${id}/attachments/1`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect(await call('GET', `/inboxes/${inbox.id}/messages/${id}/attachments/x`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
      const ours = await call('POST', `/inboxes/${inbox.id}/drafts`, { text: 'x', attachments: [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }] });
      const { draftId } = body<{ draftId: string }>(ours);
      expect(body<{ draft: { attachments: Array<{ id: string | null }> } }>(await call('GET', `/inboxes/${inbox.id}/drafts/${draftId}`)).draft.attachments[0].id).toEqual(expect.any(String));
      expect(await call('GET', `/inboxes/${inbox.id}/messages/${draftId}/attachments/0`)).toMatchObject({ status: 404 });
    } finally {
      blobs.close();
    }
  });

  it('a thread archived → listed in archived only; moved back to inbox → listed there again', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const { threadId } = await receiveMail(api.db, { workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'a@example.org' }, to: [inbox.address], subject: 'Old', text: 'x' });
    expect(await call('PATCH', `/inboxes/${inbox.id}/threads/${threadId}`, { folder: 'archived' })).toMatchObject({ status: 200, body: { thread: { folder: 'archived' } } });
    const ids = async (folder: string) => body<{ threads: Array<{ id: string }> }>(await call('GET', `/inboxes/${inbox.id}/threads?folder=${folder}`)).threads.map((thread) => thread.id);
    expect([await ids('inbox'), await ids('archived')]).toEqual([[], [threadId]]);
    await call('PATCH', `/inboxes/${inbox.id}/threads/${threadId}`, { folder: 'inbox' });
    expect([await ids('inbox'), await ids('archived')]).toEqual([[threadId], []]);
    expect(await call('PATCH', `/inboxes/${inbox.id}/threads/${threadId}`, { folder: 'drafts' })).toMatchObject({ status: 422 });
  });

  it('a new-conversation draft → 201 DraftCreated in a drafts thread; read, then deleted with its thread', async () => {
    const { call, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const created = await call('POST', `/inboxes/${inbox.id}/drafts`, { to: ['Ann <ann@example.org>'], subject: 'Idea', text: 'Draft text' });
    expect(created).toMatchObject({ status: 201, body: { draftId: expect.any(String), threadId: expect.any(String) } });
    const { draftId, threadId } = body<{ draftId: string; threadId: string }>(created);
    expect(body<{ threads: Array<{ id: string; folder: string }> }>(await call('GET', `/inboxes/${inbox.id}/threads?folder=drafts`)).threads).toEqual([
      expect.objectContaining({ id: threadId, folder: 'drafts', subject: 'Idea', messageCount: 1 }),
    ]);
    expect(await call('GET', `/inboxes/${inbox.id}/drafts/${draftId}`)).toMatchObject({
      status: 200,
      body: { draft: { id: draftId, status: 'draft', direction: 'out', to: ['Ann <ann@example.org>'], subject: 'Idea', text: 'Draft text', from: `Support Team <${inbox.address}>` } },
    });
    expect(await call('PATCH', `/inboxes/${inbox.id}/threads/${threadId}`, { folder: 'archived' })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await call('DELETE', `/inboxes/${inbox.id}/drafts/${draftId}`)).toMatchObject({ status: 200, body: { draft: { id: draftId } } });
    expect(await call('GET', `/inboxes/${inbox.id}/drafts/${draftId}`)).toMatchObject({ status: 404 });
    expect(await call('GET', `/inboxes/${inbox.id}/threads/${threadId}`)).toMatchObject({ status: 404 });
  });

  it('an incomplete draft sent → 422 naming each missing field; a draft of an unknown thread → 404; bad addresses → 422', async () => {
    const { call, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const { draftId } = body<{ draftId: string }>(await call('POST', `/inboxes/${inbox.id}/drafts`, {}));
    expect(await call('POST', `/inboxes/${inbox.id}/drafts/${draftId}/send`)).toMatchObject({
      status: 422,
      body: { error: { formErrors: ['The draft is incomplete'], fieldErrors: { to: [expect.any(String)], subject: [expect.any(String)], html: [expect.any(String)] } } },
    });
    expect(await call('POST', `/inboxes/${inbox.id}/drafts`, { threadId: randomUUID(), text: 'x' })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await call('POST', `/inboxes/${inbox.id}/drafts`, { to: 'not an address' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { to: [expect.any(String)] } } } });
  });

  it('PATCH of a draft changes only the fields given (null clears), the drafts thread follows; sent, it answers 409 conflict and stays as sent', async () => {
    const { call, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const { draftId, threadId } = body<{ draftId: string; threadId: string }>(await call('POST', `/inboxes/${inbox.id}/drafts`, { to: 'ann@example.org', subject: 'Idea', text: 'First words' }));
    const patched = await call('PATCH', `/inboxes/${inbox.id}/drafts/${draftId}`, { subject: 'Better idea', to: ['Bob <bob@example.org>'], html: '<p>Now with HTML</p>' });
    expect(patched).toMatchObject({
      status: 200,
      body: { draft: { id: draftId, status: 'draft', subject: 'Better idea', to: ['Bob <bob@example.org>'], text: 'First words', html: '<p>Now with HTML</p>' } },
    });
    expect(body<{ threads: unknown[] }>(await call('GET', `/inboxes/${inbox.id}/threads?folder=drafts`)).threads).toEqual([
      expect.objectContaining({ id: threadId, subject: 'Better idea', participants: ['bob@example.org'] }),
    ]);
    expect(await call('PATCH', `/inboxes/${inbox.id}/drafts/${draftId}`, { text: null })).toMatchObject({ status: 200, body: { draft: { text: null, html: '<p>Now with HTML</p>', subject: 'Better idea' } } });
    expect(await call('PATCH', `/inboxes/${inbox.id}/drafts/${draftId}`, { to: 'not an address' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { to: [expect.any(String)] } } } });
    expect(await call('PATCH', `/inboxes/${inbox.id}/drafts/${randomUUID()}`, { text: 'x' })).toMatchObject({ status: 404, body: { error: 'not_found' } });

    expect(await call('POST', `/inboxes/${inbox.id}/drafts/${draftId}/send`)).toMatchObject({ status: 202, body: { id: draftId, status: 'queued' } });
    expect(await call('PATCH', `/inboxes/${inbox.id}/drafts/${draftId}`, { subject: 'Too late' })).toMatchObject({ status: 409, body: { error: 'conflict', message: expect.stringContaining('sent') } });
    const thread = body<{ messages: Array<{ id: string; subject: string; status: string }> }>(await call('GET', `/inboxes/${inbox.id}/threads/${threadId}`));
    expect(thread.messages).toEqual([expect.objectContaining({ id: draftId, subject: 'Better idea', status: 'queued' })]);
  });

  it('the same send twice without an idempotencyKey → one message: 200 duplicate with the first ids; another body, recipient or thread is another message', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const send = { to: ['ann@example.org'], subject: 'Your order', text: 'It ships today.' };
    const first = await call('POST', `/inboxes/${inbox.id}/send`, send);
    expect(first).toMatchObject({ status: 202, body: { status: 'queued' } });
    const { id, threadId, messageId } = body<{ id: string; threadId: string; messageId: string }>(first);
    expect(await call('POST', `/inboxes/${inbox.id}/send`, send)).toMatchObject({ status: 200, body: { status: 'duplicate', id, threadId, messageId } });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { ...send, text: 'It ships tomorrow.' })).toMatchObject({ status: 202 });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { ...send, to: ['bob@example.org'] })).toMatchObject({ status: 202 });

    const reply = { text: 'Tracking number inside.' };
    const answered = await call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, reply);
    expect(answered).toMatchObject({ status: 202, body: { threadId } });
    expect(await call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, reply)).toMatchObject({ status: 200, body: { status: 'duplicate', id: body<{ id: string }>(answered).id } });
    const count = async () => Number((await api.db.query<{ count: string }>('SELECT count(*) FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT }))[0].count);
    expect(await count()).toBe(4);
  });

  it('a repeat just past the edge of a key window is still the first message; the same send once the window has passed is a new one', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    const send = { to: ['cleo@example.org'], subject: 'Invoice', text: 'Attached soon.' };
    const first = body<{ id: string; messageId: string }>(await call('POST', `/inboxes/${inbox.id}/send`, send));
    // As if it had been accepted a minute ago, in the window before this one.
    const keys = derivedSendKeys({ inboxId: inbox.id, scope: 'send', body: send }, new Date());
    await api.db.query('UPDATE message_keys SET idempotency_key = $2 WHERE message_id = $1', { bind: [first.messageId, keys.previous] });
    await api.db.query('UPDATE messages SET idempotency_key = $2 WHERE id = $1', { bind: [first.messageId, keys.previous] });
    await api.db.query("UPDATE inbox_messages SET created_at = now() - interval '1 minute' WHERE id = $1", { bind: [first.id] });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, send)).toMatchObject({ status: 200, body: { status: 'duplicate', id: first.id } });
    // Accepted longer ago than the window: writing the same again is a new message.
    await api.db.query('UPDATE inbox_messages SET created_at = $2 WHERE id = $1', { bind: [first.id, new Date(Date.now() - DERIVED_KEY_WINDOW_MS - 60_000)] });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, send)).toMatchObject({ status: 202, body: { status: 'queued' } });
    const rows = await api.db.query<{ count: string }>('SELECT count(*) FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(rows[0].count).toBe('2');
  });

  it('sending from a disabled inbox → 409 conflict; a send without a body or subject → 422 by field', async () => {
    const { call, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', text: 'T' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { subject: [expect.any(String)] } } },
    });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', subject: 'S' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { html: ['Give html or text'] } } },
    });
    await call('PATCH', `/inboxes/${inbox.id}`, { status: 'disabled' });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', subject: 'S', text: 'T' })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await call('POST', `/inboxes/${randomUUID()}/send`, { to: 'a@example.org', subject: 'S', text: 'T' })).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});

describe('refused sends write nothing', () => {
  async function written(inboxId: string) {
    const [row] = await api.db.query<{ threads: string; messages: string; counters: string }>(
      `SELECT (SELECT count(*) FROM threads WHERE inbox_id = $1) AS threads, (SELECT count(*) FROM inbox_messages WHERE inbox_id = $1) AS messages,
              (SELECT count(*) FROM inbox_daily_counters WHERE inbox_id = $1) AS counters`,
      { bind: [inboxId], type: QueryTypes.SELECT },
    );
    return row;
  }

  it('a send past the plan quota → 402 quota_exceeded, and no thread, inbox row or counter', async () => {
    const { workspaceId, domain, call } = await createTestWorkspace(api, { plan: 'free', domain: true });
    const inbox = await inboxOf(call, domain);
    await api.db.query('INSERT INTO usage_counters (workspace_id, period_start, used) VALUES ($1, $2, 3000)', {
      bind: [workspaceId, periodKey(usagePeriodAt(new Date()))],
    });
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { to: 'a@example.org', subject: 'S', text: 'T' })).toMatchObject({
      status: 402,
      body: { error: 'quota_exceeded', resource: 'messages' },
    });
    expect(await written(inbox.id)).toEqual({ threads: '0', messages: '0', counters: '0' });
  });

  it('a send whose every to recipient is suppressed → 409 suppressed, and nothing written', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const inbox = await inboxOf(call, domain);
    await suppressAddresses(api.db, workspaceId, 'email', ['gone@example.org'], 'hard_bounce');
    expect(await call('POST', `/inboxes/${inbox.id}/send`, { to: 'gone@example.org', subject: 'S', text: 'T' })).toMatchObject({
      status: 409,
      body: { error: 'suppressed' },
    });
    expect(await written(inbox.id)).toEqual({ threads: '0', messages: '0', counters: '0' });
  });
});

describe('email rules', () => {
  it('rules are created lower-case, listed newest first, read by the SMTP listener, and deleted', async () => {
    const { call, workspaceId } = await workspaceWithDomain();
    const block = await call('POST', '/email-rules', { action: 'block', matchType: 'address', value: 'Spammer@Example.ORG', note: 'abuse' });
    expect(block).toMatchObject({ status: 201, body: { rule: { action: 'block', matchType: 'address', value: 'spammer@example.org', note: 'abuse' } } });
    const allow = await call('POST', '/email-rules', { action: 'allow', matchType: 'domain', value: '@Partner.Example.COM' });
    expect(allow).toMatchObject({ status: 201, body: { rule: { value: 'partner.example.com', note: null } } });
    const ids = [block, allow].map((response) => body<{ rule: { id: string } }>(response).rule.id);
    expect(body<{ rules: Array<{ id: string }> }>(await call('GET', '/email-rules')).rules.map((rule) => rule.id)).toEqual([ids[1], ids[0]]);
    expect(new Set(await listEmailRules(api.db, workspaceId))).toEqual(
      new Set([
        { action: 'block', matchType: 'address', value: 'spammer@example.org' },
        { action: 'allow', matchType: 'domain', value: 'partner.example.com' },
      ]),
    );
    expect(await call('DELETE', `/email-rules/${ids[0]}`)).toMatchObject({ status: 200, body: { rule: { id: ids[0] } } });
    expect(await call('DELETE', `/email-rules/${ids[0]}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await listEmailRules(api.db, workspaceId)).toEqual([{ action: 'allow', matchType: 'domain', value: 'partner.example.com' }]);
  });

  it('the same rule again in another case → 409 conflict with the first id', async () => {
    const { call } = await workspaceWithDomain();
    const first = body<{ rule: { id: string } }>(await call('POST', '/email-rules', { action: 'block', matchType: 'domain', value: 'spam.example.net' })).rule;
    expect(await call('POST', '/email-rules', { action: 'block', matchType: 'domain', value: 'SPAM.Example.net' })).toMatchObject({ status: 409, body: { error: 'conflict', id: first.id } });
  });

  it('past 1,000 rules → 409 conflict; deleting one makes room', async () => {
    const { call, workspaceId } = await workspaceWithDomain();
    await api.db.query(
      `INSERT INTO email_rules (id, workspace_id, action, match_type, value)
       SELECT gen_random_uuid(), $1, 'block', 'address', 'sender' || n || '@example.org' FROM generate_series(1, 1000) AS n`,
      { bind: [workspaceId] },
    );
    expect(await call('POST', '/email-rules', { action: 'block', matchType: 'domain', value: 'one-more.example.org' })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const [{ id }] = await api.db.query<{ id: string }>('SELECT id FROM email_rules WHERE workspace_id = $1 LIMIT 1', { bind: [workspaceId], type: QueryTypes.SELECT });
    await call('DELETE', `/email-rules/${id}`);
    expect((await call('POST', '/email-rules', { action: 'block', matchType: 'domain', value: 'one-more.example.org' })).status).toBe(201);
  });

  it('a value that is no address or no domain, or an unknown action → 422 by field', async () => {
    const { call } = await workspaceWithDomain();
    for (const [input, field] of [
      [{ action: 'block', matchType: 'address', value: 'example.org' }, 'value'],
      [{ action: 'block', matchType: 'domain', value: 'a@b@c' }, 'value'],
      [{ action: 'block', matchType: 'domain', value: '10.0.0.1' }, 'value'],
      [{ action: 'deny', matchType: 'domain', value: 'example.org' }, 'action'],
      [{ action: 'allow', matchType: 'ip', value: 'example.org' }, 'matchType'],
      [{ action: 'allow', matchType: 'domain', value: '' }, 'value'],
    ] as const) {
      const response = await call('POST', '/email-rules', input);
      expect({ input, status: response.status, fields: Object.keys(body<{ error: { fieldErrors: object } }>(response).error.fieldErrors ?? {}) }).toEqual({ input, status: 422, fields: [field] });
    }
  });
});

describe('metrics', () => {
  it('GET /inboxes/metrics sums the daily counters: kpis, daily and per inbox (every inbox, zeros included)', async () => {
    const { call, workspaceId, domain } = await workspaceWithDomain();
    const [a, b] = [await inboxOf(call, domain, 'a'), await inboxOf(call, domain, 'b')];
    const quiet = await inboxOf(call, domain, 'quiet');
    const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
    await api.db.query(
      `INSERT INTO inbox_daily_counters (workspace_id, inbox_id, day, received, sent, delivered, bounced) VALUES
         ($1, $2, $4::date, 3, 10, 8, 1), ($1, $3, $4::date, 1, 10, 9, 0), ($1, $2, $5::date, 2, 0, 0, 0), ($1, $2, $6::date, 100, 100, 100, 0)`,
      { bind: [workspaceId, a.id, b.id, day(0), day(1), day(40)] },
    );
    const response = await call('GET', '/inboxes/metrics');
    expect(response).toMatchObject({ status: 200 });
    expect(body(response)).toEqual({
      from: day(29),
      to: day(0),
      kpis: { received: 6, sent: 20, delivered: 17, bounced: 1, deliveryRate: 0.85, bounceRate: 0.05 },
      daily: [
        { day: day(1), received: 2, sent: 0, delivered: 0, bounced: 0 },
        { day: day(0), received: 4, sent: 20, delivered: 17, bounced: 1 },
      ],
      perInbox: [
        { inboxId: quiet.id, address: quiet.address, received: 0, sent: 0, delivered: 0, bounced: 0 },
        { inboxId: b.id, address: b.address, received: 1, sent: 10, delivered: 9, bounced: 0 },
        { inboxId: a.id, address: a.address, received: 5, sent: 10, delivered: 8, bounced: 1 },
      ],
    });
    const older = body<{ kpis: { received: number } }>(await call('GET', `/inboxes/metrics?from=${day(45)}&to=${day(35)}`));
    expect(older.kpis).toMatchObject({ received: 100, deliveryRate: 1 });
    expect(await call('GET', `/inboxes/metrics?from=${day(0)}&to=${day(1)}`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.any(String)] } } } });
    expect(await call('GET', '/inboxes/metrics?from=2020-01-01&to=2026-01-01')).toMatchObject({ status: 422 });
    expect(await call('GET', '/inboxes/metrics?from=yesterday')).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.any(String)] } } } });
  });
});
