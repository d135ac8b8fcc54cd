import type { Sequelize } from 'sequelize';
import { AppError, type ValidationIssues } from '../../core/errors';
import { linkStats, messageClickedLinks } from '../../db/repositories/link-stats';
import { listMessageEvents } from '../../db/repositories/message-events';
import { findMessage, listMessages } from '../../db/repositories/messages';
import { QUOTA_EXCEEDED_RESPONSE } from '../http/openapi';
import { ok, type Reply, type RouteTable } from '../http/route';
import { EmailListSchema, LinkStatListSchema, LinkStatsQuery, MessageStatusSchema } from '../http/message-schemas';
import { emailListRowView, linkStatsView, messageStatusView } from '../http/message-views';
import { BATCH_ITEM_CODES, type BatchItemCode, EmailListQuery, EmailParams, SendEmailBatchBody, SendEmailBatchResultSchema, SendEmailBody, SendResultSchema } from './schemas';
import { statusFor } from '../http/errors';
import type { EmailAcceptance } from '../../services/acceptance/email-acceptance';
import type { SendOutcome } from '../../services/acceptance/outcome';
import { z } from 'zod';

function singleReply(outcome: SendOutcome, idempotencyKey: string): Reply {
  switch (outcome.status) {
    case 'accepted':
      return { status: 202, body: { id: outcome.id, status: 'queued', idempotencyKey, droppedRecipients: outcome.droppedRecipients } };
    case 'duplicate':
      return ok({ status: 'duplicate', idempotencyKey, id: outcome.id, ...(outcome.bodyMismatch && { bodyMismatch: true }) });
    case 'failed':
      throw outcome.error;
  }
}

/**
 * A refused item's message. The batch answers `{ code, message }` per item (the spec), so a validation
 * failure names its fields in the message, as the single send's 422 does in `fieldErrors`.
 */
function itemMessage(error: AppError): string {
  const issues = error.code === 'validation_error' ? (error.details.issues as ValidationIssues | undefined) : undefined;
  if (!issues) return error.message;
  const fields = Object.entries(issues.fieldErrors).flatMap(([field, messages]) => messages.map((message) => `${field}: ${message}`));
  const parts = [...issues.formErrors, ...fields];
  return parts.length ? parts.join('; ') : error.message;
}

const isBatchItemCode = (code: string): code is BatchItemCode => (BATCH_ITEM_CODES as readonly string[]).includes(code);

/**
 * A refused item's error: `{ code, message }`, and a quota refusal's figures as the single send's 402 has them.
 * The spec closes the item codes to its list: every other refusal of the item's input (an attachment refused,
 * attachment_rejected on a single send) is a validation_error whose message keeps its reason. A server-side
 * failure is no item's fault: the whole request answers it.
 */
function itemError(error: AppError) {
  if (!isBatchItemCode(error.code)) {
    if (statusFor(error.code) >= 500) throw error;
    return { code: 'validation_error' as const, message: `${error.code}: ${itemMessage(error)}` };
  }
  const base = { code: error.code, message: itemMessage(error) };
  return error.code === 'quota_exceeded' ? { ...base, ...error.details } : base;
}

function batchItem(outcome: SendOutcome, index: number) {
  switch (outcome.status) {
    case 'accepted':
      return { index, status: 'accepted' as const, id: outcome.id, duplicate: false, droppedRecipients: outcome.droppedRecipients };
    case 'duplicate':
      return { index, status: 'accepted' as const, id: outcome.id, duplicate: true };
    case 'failed':
      return { index, status: 'failed' as const, error: itemError(outcome.error) };
  }
}

export function emailRoutes(routes: RouteTable, sends: EmailAcceptance, db: Sequelize): void {
  routes.post('/emails', 'email:send', {
    summary: 'Send an email (accepted, then sent by a durable workflow)',
    body: SendEmailBody,
    bodyLimit: 'large',
    responses: {
      202: { description: 'Accepted and queued', schema: SendResultSchema },
      200: { description: 'This idempotencyKey was already accepted: the first id', schema: SendResultSchema },
      402: QUOTA_EXCEEDED_RESPONSE,
      403: { description: 'domain_not_verified' },
      409: { description: 'suppressed: no to recipient left' },
    },
    handle: async ({ principal, body }) => singleReply(await sends.send(principal, body), body.idempotencyKey),
  });

  routes.post('/emails/batch', 'email:send', {
    summary: 'Send up to 100 emails; each item is accepted or refused on its own',
    body: SendEmailBatchBody,
    bodyLimit: 'large',
    responses: { 207: { description: 'Per-item results aligned by index', schema: SendEmailBatchResultSchema } },
    handle: async ({ principal, body }) => {
      const items = body.emails.map((item) => {
        const parsed = SendEmailBody.safeParse(item);
        return parsed.success ? parsed.data : AppError.validation(z.flattenError(parsed.error));
      });
      const results = (await sends.sendBatch(principal, items)).map(batchItem);
      const accepted = results.filter((result) => result.status === 'accepted').length;
      return { status: 207, body: { accepted, failed: results.length - accepted, results } };
    },
  });

  routes.get('/emails', 'email:send', {
    cost: 'search',
    summary: 'List email sends, newest first (email only: WhatsApp and Telegram messages are read at GET /messages/{id})',
    query: EmailListQuery,
    responses: { 200: { description: 'A page of sends', schema: EmailListSchema } },
    handle: async ({ principal, query }) => {
      // Email only: the list's rows are the spec's EmailList, and a chat message is read at GET /messages/:id.
      const { rows, total } = await listMessages(db, principal.workspaceId, {
        ...query,
        channel: 'email',
        from: query.from ? new Date(query.from) : undefined,
        until: query.until ? new Date(query.until) : undefined,
      });
      return ok({ data: rows.map(emailListRowView), total, limit: query.limit, offset: query.offset });
    },
  });

  // Before /emails/:id, which would take "links" for an id.
  routes.get('/emails/links', 'email:send', {
    cost: 'search',
    summary: 'Per-link click statistics of the workspace over a period (human clicks counted, machine clicks reported)',
    query: LinkStatsQuery,
    responses: { 200: { description: 'Links, most unique clicks first', schema: LinkStatListSchema } },
    handle: async ({ principal, query }) => {
      const scope = { from: query.from ? new Date(query.from) : undefined, until: query.until ? new Date(query.until) : undefined, campaignId: query.campaignId };
      return ok(linkStatsView(await linkStats(db, principal.workspaceId, scope)));
    },
  });

  routes.get('/emails/:id', 'email:send', {
    summary: 'Status, metadata, attachments and the events timeline of a send',
    params: EmailParams,
    responses: { 200: { description: 'The send', schema: MessageStatusSchema }, 404: { description: 'No such send' } },
    handle: async ({ principal, params }) => {
      const message = await findMessage(db, principal.workspaceId, params.id);
      if (!message) throw AppError.notFound('Email');
      const [events, clicked] = await Promise.all([
        listMessageEvents(db, principal.workspaceId, message.id),
        messageClickedLinks(db, principal.workspaceId, message.id),
      ]);
      return ok(messageStatusView(message, events, clicked));
    },
  });
}
