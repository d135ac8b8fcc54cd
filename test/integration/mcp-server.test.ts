import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import type { Grant } from '../../core/scopes';
import { TOOLS } from '../../packages/mcp/src/catalog';
import { createMessagingMcpServer } from '../../packages/mcp/src/server';
import { createList, seedContacts } from '../helpers/campaigns';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { receiveMail } from '../helpers/inbox-mail';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

/**
 * The MCP server as an agent meets it: the SDK's own client, linked in-process to the server, which talks to
 * the real API (an email stack: dispatcher, workers, an SMTP sink as the provider) with one workspace key.
 */
let stack: EmailStack;
const opened: Array<{ agent: Client; server: McpServer }> = [];
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(async () => {
  await Promise.all(opened.map(async ({ agent, server }) => Promise.all([agent.close(), server.close()])));
  await stack.close();
});

async function connectAgent(apiKey: string): Promise<Client> {
  const { server } = await createMessagingMcpServer({ baseUrl: stack.api.url, apiKey });
  const [agentSide, serverSide] = InMemoryTransport.createLinkedPair();
  const agent = new Client({ name: 'test-agent', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), agent.connect(agentSide)]);
  opened.push({ agent, server });
  return agent;
}

const toolNames = async (agent: Client) => (await agent.listTools()).tools.map((tool) => tool.name);

interface ToolAnswer {
  isError: boolean;
  text: string;
}

async function use(agent: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const result = await agent.callTool({ name, arguments: args });
  const content = result.content as Array<{ type: string; text?: string }>;
  return { isError: result.isError === true, text: content.map((part) => part.text ?? '').join('') };
}

/** A tool's JSON answer; fails the test with the tool's error text when it answered an error. */
async function useOk<T>(agent: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const answer = await use(agent, name, args);
  if (answer.isError) throw new Error(`${name} answered an error: ${answer.text}`);
  return JSON.parse(answer.text) as T;
}

describe('which tools a key is offered', () => {
  it('a full-access key → every tool, each with a description and an object input schema', async () => {
    const { apiKey } = await createTestWorkspace(stack.api);
    const { tools } = await (await connectAgent(apiKey)).listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS.map((tool) => tool.name));
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(tools.find((tool) => tool.name === 'send_campaign')?.inputSchema.required).toEqual(['campaignId', 'confirmationToken']);
  });

  it.each<[Grant[], string[]]>([
    [['email:send'], ['send_email', 'get_message', 'get_usage']],
    [['messages:send'], ['send_message', 'get_message', 'get_usage']],
    [['contacts:write'], ['search_contacts', 'get_usage']],
    [['inbox:read'], ['list_inboxes', 'list_inbox_threads', 'read_thread', 'get_usage']],
    [['inbox:read', 'inbox:send'], ['list_inboxes', 'list_inbox_threads', 'read_thread', 'reply_to_thread', 'get_usage']],
    [['campaigns:read'], ['list_campaigns', 'get_usage']],
    [['campaigns:write'], ['list_campaigns', 'estimate_campaign', 'send_campaign', 'get_usage']],
    [['domains:write'], ['list_domains', 'get_usage']],
    [['webhooks:write'], ['get_usage']],
  ])('a key with %j → exactly %j', async (scopes, expected) => {
    const { workspaceId } = await createTestWorkspace(stack.api);
    const { apiKey } = await createTestKey(stack.api, workspaceId, scopes);
    expect(await toolNames(await connectAgent(apiKey))).toEqual(expected);
  });

  it('a tool the key is not offered cannot be called either: the call is an error naming the tool, and nothing reaches the API', async () => {
    const { workspaceId } = await createTestWorkspace(stack.api);
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['email:send']);
    const refused = await use(await connectAgent(apiKey), 'search_contacts', { q: 'ann' });
    expect(refused).toEqual({ isError: true, text: expect.stringContaining('search_contacts not found') });
  });

  it('a revoked key → the server does not start, with the API\'s unauthorized', async () => {
    const { workspaceId, apiKey: owner } = await createTestWorkspace(stack.api);
    const { apiKey, keyId } = await createTestKey(stack.api, workspaceId, ['email:send']);
    expect((await stack.api.call('DELETE', `/api/v1/api-keys/${keyId}`, { key: owner })).status).toBe(200);
    await expect(createMessagingMcpServer({ baseUrl: stack.api.url, apiKey })).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });
});

describe('an agent sending', () => {
  it('send_email from a key with only email:send → queued, the mail reaches the provider, get_message shows it sent with its events', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['email:send']);
    const agent = await connectAgent(apiKey);
    const subject = `Your order ${randomUUID()}`;
    const accepted = await useOk<{ id: string; status: string }>(agent, 'send_email', {
      from: `Shop <orders@${domain}>`,
      to: 'ann@example.org',
      subject,
      text: 'It ships today.',
    });
    expect(accepted).toMatchObject({ id: expect.any(String), status: 'queued' });

    expect(await stack.waitForStatus(workspaceId, accepted.id, ['sent'])).toBe('sent');
    const mail = stack.sink.received.find((received) => received.raw.includes(subject));
    expect(mail?.recipients).toEqual(['ann@example.org']);
    expect((await simpleParser(mail?.raw ?? '')).text).toContain('It ships today.');

    const status = await useOk<{ id: string; status: string; events: Array<{ type: string }> }>(agent, 'get_message', { id: accepted.id });
    expect(status).toMatchObject({ id: accepted.id, status: 'sent' });
    expect(status.events.map((event) => event.type)).toContain('sent');
  });

  it('send_email repeated with the same idempotencyKey → one send: the second answers duplicate with the first id', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['email:send']);
    const agent = await connectAgent(apiKey);
    const args = { from: `orders@${domain}`, to: 'bob@example.org', subject: 'Once', text: 'Once only', idempotencyKey: `agent-${randomUUID()}` };
    const first = await useOk<{ id: string }>(agent, 'send_email', args);
    expect(await useOk(agent, 'send_email', args)).toMatchObject({ status: 'duplicate', id: first.id });
    const rows = await stack.api.db.query('SELECT id FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(rows).toHaveLength(1);
  });
});

describe('an agent reading', () => {
  it('search_contacts by text, by two attributes and by page → only the matching contacts, with the total', async () => {
    const { workspaceId } = await createTestWorkspace(stack.api);
    const seeded = await seedContacts(stack.api.db, workspaceId, { count: 4, prefix: 'mcp-reader', attributes: (i) => ({ vip: i < 2, tier: i % 2 === 0 ? 'gold' : 'blue' }) });
    await seedContacts(stack.api.db, workspaceId, { count: 1, prefix: 'someone-else' });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['contacts:read']);
    const agent = await connectAgent(apiKey);
    type Page = { data: Array<{ id: string }>; total: number };
    const ids = (page: Page) => page.data.map((contact) => contact.id).sort();

    const byText = await useOk<Page>(agent, 'search_contacts', { q: 'mcp-reader' });
    expect(byText.total).toBe(4);
    expect(ids(byText)).toEqual(seeded.map((contact) => contact.id).sort());
    const byAttributes = await useOk<Page>(agent, 'search_contacts', { attribute: ['vip:true', 'tier:gold'] });
    expect(ids(byAttributes)).toEqual([seeded[0].id]);
    const secondPage = await useOk<Page & { page: number }>(agent, 'search_contacts', { q: 'mcp-reader', page: 2, pageSize: 3 });
    expect(secondPage).toMatchObject({ page: 2, total: 4 });
    expect(secondPage.data).toHaveLength(1);
  });

  it('list_domains → the workspace\'s verified domain, without its DNS records', async () => {
    const { workspaceId, domain, domainId } = await createTestWorkspace(stack.api, { domain: true });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['domains:write']);
    const listed = await useOk<{ domains: Array<Record<string, unknown>> }>(await connectAgent(apiKey), 'list_domains', {});
    expect(listed.domains).toEqual([expect.objectContaining({ id: domainId, name: domain, status: 'verified' })]);
    expect(listed.domains[0]).not.toHaveProperty('dnsRecords');
  });
});

describe('an agent answering its inbox', () => {
  it('list_inbox_threads, read_thread, then reply_to_thread → the answer goes to the sender, In-Reply-To the received mail; the thread holds both', async () => {
    const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
    const inbox = ((await call('POST', '/inboxes', { domain, localPart: 'support' })).body as { inbox: { id: string; address: string } }).inbox;
    const received = `${randomUUID()}@mail.example.org`;
    const { threadId } = await receiveMail(stack.api.db, {
      workspaceId, inboxId: inbox.id, messageIdHeader: received, from: { address: 'ann@example.org', name: 'Ann' },
      to: [inbox.address], subject: 'Order 42', text: 'Where is my order?', html: '<p>Where is my order?</p>',
    });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['inbox:read', 'inbox:send']);
    const agent = await connectAgent(apiKey);

    expect(await useOk(agent, 'list_inboxes', {})).toMatchObject({ inboxes: [{ id: inbox.id, address: inbox.address }] });
    const listed = await useOk<{ threads: Array<{ id: string; subject: string; unreadCount: number }> }>(agent, 'list_inbox_threads', { inboxId: inbox.id });
    expect(listed.threads).toEqual([expect.objectContaining({ id: threadId, subject: 'Order 42', unreadCount: 1 })]);
    const read = await useOk<{ messages: Array<Record<string, unknown>> }>(agent, 'read_thread', { inboxId: inbox.id, threadId });
    expect(read.messages).toEqual([expect.objectContaining({ direction: 'in', from: 'Ann <ann@example.org>', text: 'Where is my order?' })]);
    expect(read.messages[0]).not.toHaveProperty('html');

    const reply = await useOk<{ id: string; threadId: string; messageId: string }>(agent, 'reply_to_thread', { inboxId: inbox.id, threadId, text: 'It ships today.' });
    expect(reply.threadId).toBe(threadId);
    await stack.waitForStatus(workspaceId, reply.messageId, ['sent']);
    const mail = stack.sink.received.find((sent) => sent.raw.includes(`<${reply.messageId}@`));
    const parsed = await simpleParser(mail?.raw ?? '');
    expect(parsed.inReplyTo).toBe(`<${received}>`);
    expect(parsed.subject).toBe('Re: Order 42');
    expect(mail?.recipients).toEqual(['ann@example.org']);

    const after = await useOk<{ thread: { messageCount: number }; messages: Array<{ direction: string }> }>(agent, 'read_thread', { inboxId: inbox.id, threadId });
    expect(after.thread.messageCount).toBe(2);
    expect(after.messages.map((message) => message.direction)).toEqual(['in', 'out']);

    // The agent sends the same answer again (a retry): the service takes it as the first one, nothing goes out twice.
    expect(await useOk(agent, 'reply_to_thread', { inboxId: inbox.id, threadId, text: 'It ships today.' })).toMatchObject({ status: 'duplicate', messageId: reply.messageId });
    expect(stack.sink.received.filter((sent) => sent.raw.includes(`<${reply.messageId}@`))).toHaveLength(1);

    const empty = await use(agent, 'reply_to_thread', { inboxId: inbox.id, threadId });
    expect(empty).toEqual({ isError: true, text: expect.stringMatching(/^validation_error: /) });
  });
});

describe('an agent and a campaign', () => {
  it('send_campaign without a token or with a wrong one → refused, the campaign stays a draft and nothing is sent; with the estimate\'s token → it sends', async () => {
    const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
    const listId = await createList(call);
    await seedContacts(stack.api.db, workspaceId, { count: 3, prefix: `mcp-${randomUUID()}`, listId });
    const campaign = await call('POST', '/campaigns', { name: 'Spring', fromAddress: `news@${domain}`, listId, subject: 'Spring', html: '<p>Sale</p>' });
    const campaignId = (campaign.body as { id: string }).id;
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['campaigns:write']);
    const agent = await connectAgent(apiKey);

    const withoutToken = await use(agent, 'send_campaign', { campaignId });
    expect(withoutToken).toEqual({ isError: true, text: expect.stringContaining('confirmationToken') });
    const wrongToken = await use(agent, 'send_campaign', { campaignId, confirmationToken: 'not-the-token' });
    expect(wrongToken).toEqual({ isError: true, text: expect.stringMatching(/^confirmation_invalid: /) });
    expect((await call('GET', `/campaigns/${campaignId}`)).body).toMatchObject({ status: 'draft' });
    const messages = await stack.api.db.query('SELECT id FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(messages).toHaveLength(0);

    const estimate = await useOk<{ estimate: { recipients: number }; confirmationToken: string }>(agent, 'estimate_campaign', { campaignId });
    expect(estimate.estimate.recipients).toBe(3);
    const sent = await useOk(agent, 'send_campaign', { campaignId, confirmationToken: estimate.confirmationToken });
    expect(sent).toMatchObject({ id: campaignId, status: 'sending', recipients: 3 });
  });
});

describe('API errors reach the agent as tool errors', () => {
  it('send_email from a domain the workspace has not verified → isError with domain_not_verified and the API\'s message; the server goes on', async () => {
    const { apiKey } = await createTestWorkspace(stack.api);
    const agent = await connectAgent(apiKey);
    const refused = await use(agent, 'send_email', { from: 'me@unverified.example.com', to: 'ann@example.org', subject: 'Hi', text: 'Hi' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^domain_not_verified: \S+/);

    const unknown = await use(agent, 'get_message', { id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown).toEqual({ isError: true, text: expect.stringMatching(/^not_found: /) });
    const invalid = await use(agent, 'get_message', { id: 'not-an-id' });
    expect(invalid).toEqual({ isError: true, text: expect.stringContaining('id') });
    expect(await useOk(agent, 'get_usage', {})).toMatchObject({ plan: expect.any(String) });
  });
});
