import { z } from 'zod';
import { unwrap } from '@messaging-backend/client';
import { holds } from '../scopes';
import { defineTool } from '../tool';
import { Addresses, Id, IdempotencyKey, Variables } from './inputs';

export const sendEmail = defineTool({
  name: 'send_email',
  title: 'Send an email',
  description:
    'Send one email (to up to 50 recipients across to, cc and bcc) from an address on one of the workspace\'s verified domains ' +
    '(list_domains shows them). Give subject plus html and/or text, or a templateId with variables. The email is accepted and queued, ' +
    'then sent in the background: the answer is { id, status: "queued" } (or "duplicate" for a repeated idempotencyKey). ' +
    'Call get_message with the id to see whether it was sent, delivered or bounced. Recipients that are suppressed are dropped (droppedRecipients).',
  access: ['email:send'],
  input: z.object({
    from: z.string().min(1).describe('Sender: "ann@example.com" or "Ann <ann@example.com>", on a verified domain'),
    to: Addresses('Recipient address, or a list of them'),
    subject: z.string().min(1).max(998).optional().describe('Required unless templateId supplies it'),
    text: z.string().optional().describe('Plain-text body'),
    html: z.string().optional().describe('HTML body'),
    cc: Addresses('Copies').optional(),
    bcc: Addresses('Blind copies').optional(),
    replyTo: Addresses('Where replies go').optional(),
    templateId: z.string().min(1).optional().describe('A template\'s id or name, instead of subject/html/text'),
    variables: Variables.optional(),
    idempotencyKey: IdempotencyKey.optional(),
  }),
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  // Without the agent's key the client generates one, so its retries of a lost answer never send twice.
  run: async ({ client }, body) => unwrap(client.POST('/api/v1/emails', { body })),
});

export const sendMessage = defineTool({
  name: 'send_message',
  title: 'Send a WhatsApp, Telegram or email message',
  description:
    'Send one message on a chat channel (whatsapp: to is an E.164 number like +14155550100; telegram: to is a numeric chat id) or by email, ' +
    'or to a contact (contactId) on its preferred channel when channel is left out. The channel\'s integration must be set up in the workspace. ' +
    'Free-form WhatsApp text needs the contact to have written within 24 hours; otherwise use an approved contentSid template. ' +
    'Answers { id, status: "queued", channel }; call get_message with the id to follow it.',
  access: ['messages:send'],
  input: z.object({
    channel: z.enum(['whatsapp', 'telegram', 'email']).optional().describe('Required unless contactId is given'),
    to: z.string().min(1).optional().describe('Phone number (whatsapp), chat id (telegram) or address (email); required unless contactId is given'),
    contactId: Id('The contact this message is for (search_contacts finds it)').optional(),
    text: z.string().optional().describe('The message text (chat: shown as written, no markup)'),
    subject: z.string().min(1).max(998).optional().describe('email only'),
    html: z.string().optional().describe('email only (chat channels send its plain text)'),
    from: z.string().min(1).optional().describe('email only: a sender on a verified domain; else the workspace\'s default sender'),
    templateId: z.string().min(1).optional().describe('A template\'s id or name, instead of text'),
    variables: Variables.optional(),
    contentSid: z.string().regex(/^HX[0-9a-fA-F]{32}$/).optional().describe('whatsapp: an approved Twilio content template (HX...)'),
    contentVariables: z.record(z.string(), z.string()).optional().describe('whatsapp: the content template\'s variables ({"1": "Ann"})'),
    idempotencyKey: IdempotencyKey.optional(),
  }),
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  run: async ({ client }, body) => unwrap(client.POST('/api/v1/messages', { body })),
});

export const getMessage = defineTool({
  name: 'get_message',
  title: 'Get a message\'s status and events',
  description:
    'The status of a message sent earlier (queued, sending, sent, delivered, bounced, failed, ...), its metadata (to, from, subject, provider) ' +
    'and its events timeline (delivered, opened, clicked, bounced, ...). Use the id send_email, send_message or reply_to_thread answered.',
  access: ['email:send', 'messages:send'],
  input: z.object({ id: Id('The message id') }),
  annotations: { readOnlyHint: true },
  // GET /messages/:id reads every channel (messages:send); an email-only key reads its emails through GET /emails/:id.
  run: async ({ client, grants }, { id }) =>
    holds(grants, 'messages:send')
      ? unwrap(client.GET('/api/v1/messages/{id}', { params: { path: { id } } }))
      : unwrap(client.GET('/api/v1/emails/{id}', { params: { path: { id } } })),
});
