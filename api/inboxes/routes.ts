import { QUOTA_EXCEEDED_RESPONSE } from '../http/openapi';
import { created, ok, type Reply, type RouteTable } from '../http/route';
import type { InboxAttachmentDownloads } from './attachment-downloads';
import {
  AttachmentParams,
  CreateDraftBody,
  CreateInboxBody,
  DraftCreatedSchema,
  DraftEnvelopeSchema,
  DraftParams,
  InboxAttachmentDownloadSchema,
  InboxEnvelopeSchema,
  InboxListQuery,
  InboxListSchema,
  InboxMetricsQuery,
  InboxMetricsSchema,
  InboxParams,
  InboxSendResultSchema,
  ReplyBody,
  SendInboxBody,
  ThreadDetailQuery,
  ThreadDetailSchema,
  ThreadEnvelopeSchema,
  ThreadListQuery,
  ThreadListSchema,
  ThreadParams,
  UpdateDraftBody,
  UpdateInboxBody,
  UpdateThreadBody,
} from './schemas';
import type { InboxSendOutcome } from '../../services/acceptance/inbox-acceptance';
import type { InboxSending } from './sending';
import type { InboxService } from './service';
import { emailMessageView, inboxView, threadView } from './views';

/** 202 for an accepted send (queued, not yet sent), 200 for a repeat of its idempotencyKey. */
function sendReply(outcome: InboxSendOutcome): Reply {
  return { status: outcome.status === 'queued' ? 202 : 200, body: outcome };
}

const SEND_RESPONSES = {
  202: { description: 'Accepted and queued (sent by the send workflow, as POST /emails)', schema: InboxSendResultSchema },
  200: { description: 'This idempotencyKey was already accepted: the first message', schema: InboxSendResultSchema },
  402: QUOTA_EXCEEDED_RESPONSE,
  403: { description: 'domain_not_verified: the inbox\'s domain is no longer verified' },
  404: { description: 'No such inbox (or thread, or draft) in this workspace' },
  409: { description: 'suppressed: no to recipient left; conflict: the inbox is disabled' },
};

export interface InboxRouteServices {
  inboxes: InboxService;
  sending: InboxSending;
  downloads: InboxAttachmentDownloads;
}

export function inboxRoutes(routes: RouteTable, { inboxes, sending, downloads }: InboxRouteServices): void {
  const notFound = { description: 'No such inbox in this workspace' };
  const threadNotFound = { description: 'No such inbox or thread in this workspace' };

  routes.get('/inboxes', 'inbox:read', {
    summary: 'The workspace\'s inboxes, newest first',
    query: InboxListQuery,
    responses: { 200: { description: 'A page of inboxes', schema: InboxListSchema } },
    handle: async ({ principal, query }) => ok({ inboxes: (await inboxes.list(principal.workspaceId, query)).map(inboxView) }),
  });

  routes.post('/inboxes', 'inbox:write', {
    summary: 'Create an inbox (localPart@domain) on a verified domain of the workspace',
    body: CreateInboxBody,
    responses: {
      201: { description: 'Created', schema: InboxEnvelopeSchema },
      403: { description: 'domain_not_verified' },
      409: { description: 'conflict: an inbox of this address exists (any case; its id in the body)' },
    },
    handle: async ({ principal, body }) => created({ inbox: inboxView(await inboxes.create(principal.workspaceId, body)) }),
  });

  // Before /inboxes/:id, which would take "metrics" for an id.
  routes.get('/inboxes/metrics', 'inbox:read', {
    cost: 'search',
    summary: 'Received, sent, delivered and bounced mail of the inboxes over UTC days (default the last 30)',
    query: InboxMetricsQuery,
    responses: { 200: { description: 'KPIs, per day and per inbox', schema: InboxMetricsSchema } },
    handle: async ({ principal, query }) => ok(await inboxes.metrics(principal.workspaceId, query)),
  });

  routes.get('/inboxes/:id', 'inbox:read', {
    summary: 'An inbox',
    params: InboxParams,
    responses: { 200: { description: 'The inbox', schema: InboxEnvelopeSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok({ inbox: inboxView(await inboxes.get(principal.workspaceId, params.id)) }),
  });

  routes.patch('/inboxes/:id', 'inbox:write', {
    summary: 'Change an inbox\'s display name or status (active, disabled); absent fields stay',
    params: InboxParams,
    body: UpdateInboxBody,
    responses: { 200: { description: 'The inbox as it now is', schema: InboxEnvelopeSchema }, 404: notFound },
    handle: async ({ principal, params, body }) => ok({ inbox: inboxView(await inboxes.update(principal.workspaceId, params.id, body)) }),
  });

  routes.delete('/inboxes/:id', 'inbox:write', {
    summary: 'Delete an inbox with its threads, messages and counters; mail to its address is then refused',
    params: InboxParams,
    responses: { 200: { description: 'The deleted inbox', schema: InboxEnvelopeSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok({ inbox: inboxView(await inboxes.remove(principal.workspaceId, params.id)) }),
  });

  routes.post('/inboxes/:id/send', 'inbox:send', {
    summary: 'Start a new conversation: a thread in folder sent with this message',
    params: InboxParams,
    body: SendInboxBody,
    bodyLimit: 'large',
    responses: SEND_RESPONSES,
    handle: async ({ principal, params, body }) => sendReply(await sending.send(principal, params.id, body)),
  });

  routes.post('/inboxes/:id/drafts', 'inbox:write', {
    summary: 'Save a draft: of a new conversation, or of a reply (threadId)',
    params: InboxParams,
    body: CreateDraftBody,
    bodyLimit: 'large',
    responses: { 201: { description: 'Saved', schema: DraftCreatedSchema }, 404: threadNotFound },
    handle: async ({ principal, params, body }) => created(await sending.createDraft(principal, params.id, body)),
  });

  routes.get('/inboxes/:id/drafts/:draftId', 'inbox:read', {
    summary: 'A draft',
    params: DraftParams,
    responses: { 200: { description: 'The draft', schema: DraftEnvelopeSchema }, 404: { description: 'No such inbox or draft' } },
    handle: async ({ principal, params }) => ok({ draft: emailMessageView(await sending.getDraft(principal.workspaceId, params.id, params.draftId)) }),
  });

  routes.patch('/inboxes/:id/drafts/:draftId', 'inbox:write', {
    summary: 'Change an unsent draft: only the fields given (null clears subject, html or text; attachments replace its files)',
    params: DraftParams,
    body: UpdateDraftBody,
    bodyLimit: 'large',
    responses: {
      200: { description: 'The draft as it now is', schema: DraftEnvelopeSchema },
      404: { description: 'No such inbox or draft' },
      409: { description: 'conflict: the draft was sent (it is a message now and no longer changes)' },
    },
    handle: async ({ principal, params, body }) => ok({ draft: emailMessageView(await sending.updateDraft(principal, params.id, params.draftId, body)) }),
  });

  routes.delete('/inboxes/:id/drafts/:draftId', 'inbox:write', {
    summary: 'Delete a draft (a new conversation\'s thread goes with it)',
    params: DraftParams,
    responses: { 200: { description: 'The deleted draft', schema: DraftEnvelopeSchema }, 404: { description: 'No such inbox or draft' } },
    handle: async ({ principal, params }) => ok({ draft: emailMessageView(await sending.deleteDraft(principal.workspaceId, params.id, params.draftId)) }),
  });

  routes.post('/inboxes/:id/drafts/:draftId/send', 'inbox:send', {
    summary: 'Send a draft (once: a repeat answers 200 duplicate); an incomplete draft is refused field by field',
    params: DraftParams,
    responses: { ...SEND_RESPONSES, 422: { description: 'The draft lacks to, subject, or html/text' } },
    handle: async ({ principal, params }) => sendReply(await sending.sendDraft(principal, params.id, params.draftId)),
  });

  routes.get('/inboxes/:id/threads', 'inbox:read', {
    summary: 'Threads of a folder (inbox, sent, drafts, archived), latest activity first, by cursor',
    params: InboxParams,
    query: ThreadListQuery,
    responses: { 200: { description: 'A page of threads', schema: ThreadListSchema }, 404: notFound },
    handle: async ({ principal, params, query }) => {
      const page = await inboxes.threads(principal.workspaceId, params.id, query);
      return ok({ folder: query.folder, threads: page.threads.map(threadView), nextCursor: page.nextCursor });
    },
  });

  routes.get('/inboxes/:id/threads/:threadId', 'inbox:read', {
    summary: 'A thread with its messages, oldest first; reading it marks them read. Received html is sanitized unless ?html=raw',
    params: ThreadParams,
    query: ThreadDetailQuery,
    responses: { 200: { description: 'The thread', schema: ThreadDetailSchema }, 404: threadNotFound },
    handle: async ({ principal, params, query }) => {
      const detail = await inboxes.threadDetail(principal.workspaceId, params.id, params.threadId);
      return ok({ thread: threadView(detail.thread), messages: detail.messages.map((message) => emailMessageView(message, query.html)) });
    },
  });

  routes.patch('/inboxes/:id/threads/:threadId', 'inbox:write', {
    summary: 'Move a thread to another folder: archived to archive, inbox to unarchive',
    params: ThreadParams,
    body: UpdateThreadBody,
    responses: { 200: { description: 'The thread as it now is', schema: ThreadEnvelopeSchema }, 404: threadNotFound, 409: { description: 'The thread is an unsent draft' } },
    handle: async ({ principal, params, body }) => ok({ thread: threadView(await inboxes.moveThread(principal.workspaceId, params.id, params.threadId, body.folder)) }),
  });

  routes.post('/inboxes/:id/threads/:threadId/reply', 'inbox:send', {
    summary: 'Answer the thread\'s latest inbound message (else its latest): In-Reply-To, References and "Re:" set',
    params: ThreadParams,
    body: ReplyBody,
    bodyLimit: 'large',
    responses: { ...SEND_RESPONSES, 409: { description: 'suppressed; conflict: the inbox is disabled, or the thread holds only a draft' } },
    handle: async ({ principal, params, body }) => sendReply(await sending.reply(principal, params.id, params.threadId, body)),
  });

  routes.get('/inboxes/:id/messages/:messageId/attachments/:index', 'inbox:read', {
    summary: 'A signed download URL of a received message\'s attachment (by its position in attachments)',
    params: AttachmentParams,
    responses: { 200: { description: 'The file\'s URL, valid 15 minutes', schema: InboxAttachmentDownloadSchema }, 404: { description: 'No such inbox, message or received file' } },
    handle: async ({ principal, params }) => ok(await downloads.download(principal.workspaceId, params.id, params.messageId, params.index)),
  });
}
