import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { normalisePhone, normaliseTelegramChatId } from '../../core/identities';
import { CHAT_LIMITS, type ChatChannelName } from '../../core/message-channels';
import type { ChatContentInput } from '../../core/message-content';
import { periodKey, PLANS, usagePeriodAt } from '../../core/plans';
import { htmlToPlainText } from '../../core/templates/plain-text';
import type { AttachmentSource } from '../../core/attachments';
import { findAcceptedAndSuppressed } from '../../db/repositories/message-acceptance';
import { findTelegramIntegration } from '../../db/repositories/telegram';
import { findTwilioIntegration, insideServiceWindow } from '../../db/repositories/whatsapp';
import type { AcceptedAttachments } from '../attachment-sources';
import { currentTraceparent } from '../../infra/trace-context';
import type { SendChecks } from './email-draft';
import { duplicateOf, type Quota, type Sender, type SendOutcome } from './outcome';
import { counted } from './metrics';
import { type AcceptanceWriter, writeOne } from './write';

/** A WhatsApp or Telegram send as POST /messages takes it (api/messages/schemas.ts validates it there). */
export interface ChatSendInput {
  html?: string;
  text?: string;
  templateId?: string;
  variables?: Record<string, unknown>;
  attachments?: AttachmentSource[];
  contentSid?: string;
  contentVariables?: Record<string, string>;
  idempotencyKey: string;
  /** Only whether there is one matters here (fallback-plan.ts reads the steps). */
  fallbackChain?: readonly unknown[];
}

export interface ChatAcceptanceDeps extends AcceptanceWriter {
  checks: SendChecks;
  now?: () => Date;
}

function fieldError(field: string, message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });
}

const NORMALISE = { whatsapp: normalisePhone, telegram: normaliseTelegramChatId } as const;

/** The deps with the clock settled: what the chat acceptance works with. */
export interface ChatAccepting extends AcceptanceWriter {
  checks: SendChecks;
  now: () => Date;
}

/** Whether the workspace saved the channel's integration (Twilio for WhatsApp, a bot for Telegram). */
export async function hasIntegration(db: Sequelize, workspaceId: string, channel: ChatChannelName): Promise<boolean> {
  return (channel === 'whatsapp' ? await findTwilioIntegration(db, workspaceId) : await findTelegramIntegration(db, workspaceId)) !== null;
}

/** The 422 of a send on a chat channel the workspace has not set up, naming the field that chose it. */
export function missingIntegration(channel: ChatChannelName, field: string): AppError {
  const route = channel === 'whatsapp' ? 'PUT /integrations/twilio' : 'PUT /integrations/telegram';
  return fieldError(field, `The workspace has no ${channel} integration (${route})`);
}

export async function integrationReady({ db }: ChatAccepting, workspaceId: string, channel: ChatChannelName): Promise<void> {
  if (!(await hasIntegration(db, workspaceId, channel))) throw missingIntegration(channel, 'channel');
}

/**
 * The checks of a chat send that need nothing stored: the recipient, the integration, the template, the
 * text's length, and (for the first channel) WhatsApp's 24-hour window. Returns the content to store.
 */
export async function draftChat(accepting: ChatAccepting, workspaceId: string, channel: ChatChannelName, given: string, input: ChatSendInput, options: { window: boolean }) {
  const { db, checks, now } = accepting;
  const normalised = NORMALISE[channel](given);
  if (!normalised.ok) throw fieldError('to', normalised.reason);
  const to = normalised.address;
  await integrationReady(accepting, workspaceId, channel);
  const template = input.templateId ? await checks.templateExists(workspaceId, input.templateId) : null;
  if (input.templateId && !template) throw new AppError('template_not_found', `No template ${input.templateId}`);
  if (channel === 'telegram' && input.contentSid && !input.fallbackChain?.length) throw fieldError('contentSid', 'Only for whatsapp');
  const text = input.text ?? (input.html !== undefined ? htmlToPlainText(input.html) : undefined);
  const hasContent = text || template || input.contentSid || input.attachments?.length;
  if (!hasContent) throw fieldError('text', 'Give text, html, templateId, attachments or (whatsapp) contentSid');
  if (text && text.length > CHAT_LIMITS[channel].textChars) throw fieldError('text', `At most ${CHAT_LIMITS[channel].textChars} characters on ${channel}`);
  if ((input.attachments?.length ?? 0) > CHAT_LIMITS[channel].attachments) {
    throw fieldError('attachments', `At most ${CHAT_LIMITS[channel].attachments} on ${channel}`);
  }
  // WhatsApp delivers free-form messages only within 24 hours of the customer's last message; outside,
  // only an approved content template. Refused here rather than accepted to fail later. (A fallback
  // step is checked when it is sent: the customer may write meanwhile.)
  if (options.window && channel === 'whatsapp' && !input.contentSid && !(await insideServiceWindow(db, workspaceId, to, now()))) {
    throw fieldError('contentSid', 'Required: the customer has not written within the last 24 hours, so WhatsApp only takes an approved content template');
  }
  const stored: ChatContentInput = {
    text,
    templateVersionId: template?.versionId,
    variables: input.variables,
    ...(channel === 'whatsapp' && { contentSid: input.contentSid, contentVariables: input.contentVariables }),
  };
  return { to, template, stored };
}

/**
 * A WhatsApp or Telegram send of POST /messages, checked in the order email's are (after the idempotency
 * key, which the caller checked): the recipient, the channel's integration, the template, WhatsApp's
 * 24-hour window, the text's length, the attachments (stored last, so a send refused earlier stores
 * nothing), then suppression and quota. The insert is the one write of every acceptance (write.ts: quota
 * reserved and row written together, or neither). Drafting refusals throw (POST /messages answers one send);
 * the write's own answers (quota, a racing duplicate) come back as outcomes.
 */
export async function acceptChat(
  accepting: ChatAccepting,
  principal: Sender,
  channel: ChatChannelName,
  target: { to: string; contactId: string | null },
  input: ChatSendInput,
  hash: string,
  extraContent: Record<string, unknown> = {},
): Promise<SendOutcome> {
  const { db, checks, now } = accepting;
  const { workspaceId } = principal;
  // With a fallback chain, a customer outside WhatsApp's window is reached on the next channel: the send
  // is accepted, fails at delivery for the window, and falls back (docs/messages.md).
  const { to, template, stored } = await draftChat(accepting, workspaceId, channel, target.to, input, { window: !input.fallbackChain?.length });
  const attachments: AcceptedAttachments | null = input.attachments?.length ? await checks.prepareAttachments(workspaceId, input.attachments) : null;
  const discard = () => attachments?.discard().catch(() => undefined);
  try {
    const { accepted, suppressed } = await findAcceptedAndSuppressed(db, workspaceId, [input.idempotencyKey], [to], channel);
    const earlier = accepted.get(input.idempotencyKey);
    if (earlier) {
      await discard();
      return duplicateOf(earlier, hash);
    }
    const reason = suppressed.get(to);
    if (reason) {
      const droppedRecipients = [{ address: to, reason }];
      throw new AppError('suppressed', `${to} is suppressed on ${channel} (${reason})`, { droppedRecipients });
    }
    const quota: Quota = { plan: PLANS[principal.plan], period: usagePeriodAt(now()) };
    const message = {
      id: randomUUID(),
      kind: 'transactional' as const,
      channel,
      idempotencyKey: input.idempotencyKey,
      requestHash: hash,
      fromAddress: null,
      to: [to],
      cc: [],
      bcc: [],
      subject: null,
      content: { ...stored, ...extraContent, attachments: attachments?.refs ?? [] },
      templateId: template?.id ?? null,
      contactId: target.contactId,
      quotaUnits: 1,
      quotaPeriod: periodKey(quota.period),
      droppedRecipients: [],
      // Not grouped: the request's span is still the active one here.
      traceparent: currentTraceparent(),
    };
    return await writeOne(accepting, workspaceId, quota, { message, hash, dropped: [], discard });
  } catch (error) {
    await discard();
    throw error;
  }
}

export function createChatAcceptance(deps: ChatAcceptanceDeps) {
  const accepting: ChatAccepting = { db: deps.db, checks: deps.checks, wake: deps.wake, now: deps.now ?? (() => new Date()) };
  return {
    acceptChat: (
      principal: Sender,
      channel: ChatChannelName,
      target: { to: string; contactId: string | null },
      input: ChatSendInput,
      hash: string,
      extraContent: Record<string, unknown> = {},
    ) => counted(channel, 'transactional', () => acceptChat(accepting, principal, channel, target, input, hash, extraContent)),
    draftChat: (workspaceId: string, channel: ChatChannelName, given: string, input: ChatSendInput, options: { window: boolean }) =>
      draftChat(accepting, workspaceId, channel, given, input, options),
  };
}
