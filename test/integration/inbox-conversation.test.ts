import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { type ParsedMail, simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { closeInboundSmtp } from '../../workers/inbox/smtp-server';
import type { ApiResponse } from '../helpers/api-harness';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { startInboundListener } from '../helpers/inbox-listener';
import { until } from '../helpers/polling';

jest.setTimeout(120_000);

/**
 * A whole conversation through the public API and real SMTP: an inbox made and opened for mail by API calls,
 * a message sent from it (out through the send stack to the SMTP sink), the customer's client answering it to
 * our MX (nodemailer as the customer's server), our answer back. Each side's headers are the ones a mail client
 * threads on, and the inbox shows one thread.
 */
let stack: EmailStack;
let client: Client;
let dns: TestDnsServer;
let blobs: BlobStore;
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  dns = await startDnsServer();
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
  client = await connectTemporal(stack.api.config);
  blobs = createBlobStore(blobStoreOptions(stack.api.config));
  ({ server, port } = await startInboundListener({ stack, client, dns, blobs }));
});

afterAll(async () => {
  await closeInboundSmtp(server);
  blobs.close();
  await client.connection.close();
  await stack.close();
  await dns.close();
});

interface Thread {
  id: string;
  folder: string;
  messageCount: number;
  subject: string;
}
interface EmailMessage {
  id: string;
  direction: string;
  subject: string;
  from: string;
  replyText: string | null;
  messageIdHeader: string;
}

/** The MIME the provider was handed for a send of ours, parsed as a mail client parses it. */
async function sentMime(workspaceId: string, messageId: string): Promise<ParsedMail> {
  await stack.waitForStatus(workspaceId, messageId, ['sent']);
  const mail = stack.sink.received.find((received) => received.raw.includes(`<${messageId}@`));
  if (!mail) throw new Error(`the sink has no message ${messageId}`);
  return simpleParser(mail.raw);
}

const referencesOf = (parsed: ParsedMail) => ([] as string[]).concat(parsed.references ?? []);

it('send from an inbox → the customer replies to our MX → one thread in inbox with both → our reply carries In-Reply-To and References of the conversation', async () => {
  const { workspaceId, apiKey } = await createTestWorkspace(stack.api, { plan: 'pro' });
  const call: (method: string, path: string, body?: unknown) => Promise<ApiResponse> = stack.api.as(apiKey);
  const domain = (await addTestDomain(stack, workspaceId)).domain;
  const domains = (await call('GET', '/domains')).body as { domains: Array<{ id: string; name: string }> };
  const domainId = domains.domains.find((found) => found.name === domain)!.id;
  expect((await call('POST', `/domains/${domainId}/inbound`)).status).toBe(200);
  const created = await call('POST', '/inboxes', { domainId, localPart: 'help', displayName: 'Help desk' });
  expect(created.status).toBe(201);
  const inbox = (created.body as { inbox: { id: string; address: string } }).inbox;

  // 1. We write first.
  const first = await call('POST', `/inboxes/${inbox.id}/send`, { to: 'ann@customer.example', subject: 'Your order 1042', text: 'It shipped today.' });
  expect(first.status).toBe(202);
  const sent = first.body as { threadId: string; messageId: string };
  const ours = await sentMime(workspaceId, sent.messageId);
  expect(ours.messageId).toBe(`<${sent.messageId}@${domain}>`);

  // 2. Ann's client answers it, quoting us, to our MX.
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'mx.customer.example' });
  const answer = await transport.sendMail({
    envelope: { from: 'ann@customer.example', to: inbox.address },
    from: 'Ann <ann@customer.example>',
    to: inbox.address,
    subject: 'Re: Your order 1042',
    inReplyTo: ours.messageId,
    references: [ours.messageId!],
    messageId: '<answer-1042@customer.example>',
    text: `Great, thank you!\n\nOn Thu, Nov 26, 2026 at 9:00 AM Help desk <${inbox.address}> wrote:\n> It shipped today.\n`,
  }).finally(() => transport.close());
  expect(answer.accepted).toEqual([inbox.address]);

  // 3. One thread, moved to inbox, holding both messages; the answer's new text without the quote.
  const detail = await until('the answer threaded', async () => (await call('GET', `/inboxes/${inbox.id}/threads/${sent.threadId}`)).body as { thread: Thread; messages: EmailMessage[] },
    (body) => body.messages?.length === 2);
  expect(detail.thread.folder).toBe('inbox');
  expect(detail.messages.map((message) => message.direction)).toEqual(['out', 'in']);
  expect(detail.messages[1]).toMatchObject({ from: 'Ann <ann@customer.example>', replyText: 'Great, thank you!', messageIdHeader: 'answer-1042@customer.example' });
  const listed = (await call('GET', `/inboxes/${inbox.id}/threads?folder=inbox`)).body as { threads: Thread[] };
  expect(listed.threads.map((thread) => thread.id)).toEqual([sent.threadId]);

  // 4. Our reply answers Ann's message: the headers a mail client threads on, the subject prefixed once.
  const replied = await call('POST', `/inboxes/${inbox.id}/threads/${sent.threadId}/reply`, { text: 'You are welcome.', quote: true });
  expect(replied.status).toBe(202);
  const reply = await sentMime(workspaceId, (replied.body as { messageId: string }).messageId);
  expect(reply.inReplyTo).toBe('<answer-1042@customer.example>');
  expect(referencesOf(reply)).toEqual([ours.messageId, '<answer-1042@customer.example>']);
  expect(reply.subject).toBe('Re: Your order 1042');
  expect(reply.to && !Array.isArray(reply.to) ? reply.to.value.map((mailbox) => mailbox.address) : []).toEqual(['ann@customer.example']);
  expect(reply.text).toContain('> Great, thank you!');

  const metrics = (await call('GET', '/inboxes/metrics')).body as { kpis: { received: number; sent: number } };
  expect(metrics.kpis).toMatchObject({ received: 1, sent: 2 });
});
