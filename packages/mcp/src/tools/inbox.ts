import { z } from 'zod';
import { type components, unwrap } from '@messaging-backend/client';
import { defineTool } from '../tool';
import { Addresses, Id, ReplyIdempotencyKey } from './inputs';

type EmailMessage = components['schemas']['EmailMessage'];

export const listInboxes = defineTool({
  name: 'list_inboxes',
  title: 'List inboxes',
  description:
    'The workspace\'s agent inboxes (an address such as support@example.com that receives and sends mail), newest first. ' +
    'Use an inbox\'s id with list_inbox_threads.',
  access: ['inbox:read'],
  input: z.object({ limit: z.number().int().min(1).max(100).default(50), offset: z.number().int().min(0).default(0) }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, query) => unwrap(client.GET('/api/v1/inboxes', { params: { query } })),
});

export const listInboxThreads = defineTool({
  name: 'list_inbox_threads',
  title: 'List an inbox\'s threads',
  description:
    'Conversations of one inbox, latest activity first, with subject, participants, message and unread counts. folder is inbox (default), ' +
    'sent, drafts or archived. Answers { threads, nextCursor }: pass nextCursor as cursor for the next page (null when there is none). ' +
    'Read one with read_thread.',
  access: ['inbox:read'],
  input: z.object({
    inboxId: Id('The inbox (list_inboxes)'),
    folder: z.enum(['inbox', 'sent', 'drafts', 'archived']).default('inbox'),
    limit: z.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
  }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, { inboxId, ...query }) => unwrap(client.GET('/api/v1/inboxes/{id}/threads', { params: { path: { id: inboxId }, query } })),
});

/** The message without its html unless asked: the text parts say the same in a fraction of an agent's context. */
const forAgent = (message: EmailMessage, includeHtml: boolean) => (includeHtml ? message : { ...message, html: undefined });

export const readThread = defineTool({
  name: 'read_thread',
  title: 'Read a thread',
  description:
    'One conversation with all its messages, oldest first: direction (in = received, out = ours), from, to, subject, text, ' +
    'replyText (a received message\'s new text without the quoted history) and attachments. Reading marks the messages read. ' +
    'html is left out unless includeHtml is true (received html comes sanitized). Answer it with reply_to_thread.',
  access: ['inbox:read'],
  input: z.object({
    inboxId: Id('The inbox (list_inboxes)'),
    threadId: Id('The thread (list_inbox_threads)'),
    includeHtml: z.boolean().default(false),
  }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, { inboxId, threadId, includeHtml }) => {
    const detail = await unwrap(client.GET('/api/v1/inboxes/{id}/threads/{threadId}', { params: { path: { id: inboxId, threadId }, query: { html: 'sanitized' } } }));
    return { thread: detail.thread, messages: detail.messages.map((message) => forAgent(message, includeHtml)) };
  },
});

export const replyToThread = defineTool({
  name: 'reply_to_thread',
  title: 'Reply to a thread',
  description:
    'Send an answer in a thread from its inbox: it answers the thread\'s latest received message (In-Reply-To, References and "Re:" are set), ' +
    'to its sender unless replyAll (also the other recipients) or to is given. Give text and/or html. ' +
    'Answers { id, threadId, messageId, status: "queued" }; read_thread later shows the answer\'s status (sent, delivered, bounced), ' +
    'and so does get_message with messageId where that tool is offered.',
  access: ['inbox:send'],
  input: z.object({
    inboxId: Id('The inbox (list_inboxes)'),
    threadId: Id('The thread (list_inbox_threads)'),
    text: z.string().min(1).optional().describe('Plain-text answer'),
    html: z.string().min(1).optional().describe('HTML answer'),
    replyAll: z.boolean().default(false).describe('Also to the answered message\'s other To and Cc recipients'),
    quote: z.boolean().default(false).describe('Quote the answered message below the answer'),
    to: Addresses('Instead of the computed recipients').optional(),
    cc: Addresses('Instead of the computed copies').optional(),
    idempotencyKey: ReplyIdempotencyKey.optional(),
  }),
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  // Neither text nor html: the API's validation_error says so, naming the field.
  run: async ({ client }, { inboxId, threadId, ...body }) =>
    unwrap(client.POST('/api/v1/inboxes/{id}/threads/{threadId}/reply', { params: { path: { id: inboxId, threadId } }, body })),
});
