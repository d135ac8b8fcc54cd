import { type AddressInput, formatMailbox, type Mailbox } from '../../core/addresses';
import type { AttachmentSource } from '../../core/attachments';
import { AppError } from '../../core/errors';
import { type EmailContentInput, personalized } from '../../core/message-content';
import { mentionsUnsubscribeUrl, UNSUBSCRIBE_VARIABLE } from '../../core/list-unsubscribe';
import { analyseInlineContent } from '../../core/templates/analyse';
import { dropSuppressed, parseRecipients, type Recipients, type RecipientsResult, recipientCount } from '../../core/recipients';
import type { DroppedRecipient, NewMessage } from '../../db/repositories/messages';
import type { AcceptedAttachments } from '../attachment-sources';
import { authorizedSender, type VerifiedDomainLookup } from '../../core/sender-authorization';

/**
 * An email to accept, as POST /emails takes it (api/emails/schemas.ts validates it there); POST /messages,
 * its fallback steps and inbox mail build one of their own.
 */
export interface SendEmailInput {
  to: AddressInput;
  cc?: AddressInput;
  bcc?: AddressInput;
  replyTo?: AddressInput;
  from: string;
  subject?: string;
  html?: string;
  text?: string;
  templateId?: string;
  variables?: Record<string, unknown>;
  attachments?: AttachmentSource[];
  idempotencyKey: string;
  disableTracking: boolean;
  disableUtm: boolean;
  /** A transactional send asking for the one-click unsubscribe headers and `{{ unsubscribe_url }}` (core/message-content.ts). */
  listUnsubscribe?: boolean;
}

/** A template a send names: its current version (pinned), whether it has a subject, the variables it uses. */
export interface TemplateFound {
  id: string;
  versionId: string;
  hasSubject: boolean;
  variables: string[];
}

/** What acceptance needs from other areas, as functions, so each check stays where its data lives. */
export interface SendChecks {
  /** The sending domain if it is verified for the workspace, with its default display name. */
  verifiedDomain: VerifiedDomainLookup;
  /**
   * The template and its current version, which the message pins so a later edit cannot change it, and
   * whether that version has a subject of its own.
   */
  templateExists(workspaceId: string, idOrName: string): Promise<TemplateFound | null>;
  /** Checks and stores the send's attachment items; returns references to keep with the message. */
  prepareAttachments(workspaceId: string, items: NonNullable<SendEmailInput['attachments']>): Promise<AcceptedAttachments>;
}

/** A send that passed its own checks; suppression, quota and the insert are settled for many at once. */
export interface Draft {
  input: SendEmailInput;
  hash: string;
  from: Mailbox;
  recipients: Recipients;
  template: TemplateFound | null;
  attachments: AcceptedAttachments | null;
}

function fieldError(field: string, message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });
}

/**
 * The checks of one send that need nothing of the others, in the order their errors are reported:
 * recipients, sender domain, template, attachments (stored last, so a send refused earlier stores nothing).
 * Throws the send's AppError.
 */
export async function draftSend(
  checks: SendChecks,
  workspaceId: string,
  input: SendEmailInput,
  hash: string,
  parsed: RecipientsResult = parseRecipients(input),
): Promise<Draft> {
  if (!parsed.ok && 'tooMany' in parsed) {
    throw new AppError('too_many_recipients', `to + cc + bcc may hold at most 50 recipients; got ${parsed.tooMany}`);
  }
  if (!parsed.ok) throw fieldError(parsed.field, parsed.error);
  const from = await authorizedSender(checks.verifiedDomain, workspaceId, input.from, 'from');
  // Personalized content renders as Liquid at send time: a mistake is refused now, never sent as written.
  if (personalized('transactional', { variables: input.variables, listUnsubscribe: input.listUnsubscribe ?? false })) analyseInlineContent(input);
  const template = input.templateId ? await checks.templateExists(workspaceId, input.templateId) : null;
  if (input.templateId && !template) throw new AppError('template_not_found', `No template ${input.templateId}`);
  // Accepting it would only defer the failure: an email cannot leave without a subject.
  if (template && input.subject === undefined && !template.hasSubject) {
    throw fieldError('subject', `Required: the template ${input.templateId} has no subject`);
  }
  checkUnsubscribeAsked(input, template);
  const attachments = input.attachments?.length ? await checks.prepareAttachments(workspaceId, input.attachments) : null;
  return { input, hash, from, recipients: parsed.recipients, template, attachments };
}

/**
 * `{{ unsubscribe_url }}` in a transactional send that did not ask for the unsubscribe would go out empty (or
 * as written): refused, naming the option that provides the link, unless the send's variables give one.
 */
function checkUnsubscribeAsked(input: SendEmailInput, template: TemplateFound | null): void {
  if (input.listUnsubscribe || input.variables?.[UNSUBSCRIBE_VARIABLE] !== undefined) return;
  if (template?.variables.includes(UNSUBSCRIBE_VARIABLE) || mentionsUnsubscribeUrl(input.subject, input.html, input.text)) {
    throw fieldError('listUnsubscribe', `The content uses {{ ${UNSUBSCRIBE_VARIABLE} }}: set listUnsubscribe to true for the link (and its List-Unsubscribe headers)`);
  }
}

/** Every address a send goes to, lower-cased (none if its recipients do not parse), for suppression lookups. */
export function recipientAddresses(parsed: RecipientsResult): string[] {
  if (!parsed.ok) return [];
  const { to, cc, bcc } = parsed.recipients;
  return [...to, ...cc, ...bcc].map((mailbox) => mailbox.address.toLowerCase());
}

/** The message row of a draft once suppressed copies are dropped; 409 `suppressed` when no `to` remains. */
export function messageOf(
  draft: Draft,
  id: string,
  suppressed: ReadonlyMap<string, string>,
  quotaPeriod: string,
): { message: NewMessage; dropped: DroppedRecipient[] } {
  const { input } = draft;
  const { recipients, dropped } = dropSuppressed(draft.recipients, suppressed);
  if (recipients.to.length === 0) {
    const reasons = dropped.map((entry) => `${entry.address} (${entry.reason})`).join(', ');
    throw new AppError('suppressed', `Every to recipient is suppressed: ${reasons}`, { droppedRecipients: dropped });
  }
  const message: NewMessage = {
    id,
    kind: 'transactional',
    channel: 'email',
    idempotencyKey: input.idempotencyKey,
    requestHash: draft.hash,
    fromAddress: formatMailbox(draft.from),
    to: recipients.to.map(formatMailbox),
    cc: recipients.cc.map(formatMailbox),
    bcc: recipients.bcc.map(formatMailbox),
    subject: input.subject ?? null,
    content: {
      html: input.html,
      text: input.text,
      templateVersionId: draft.template?.versionId,
      variables: input.variables,
      replyTo: recipients.replyTo.map(formatMailbox),
      attachments: draft.attachments?.refs ?? [],
      disableTracking: input.disableTracking,
      disableUtm: input.disableUtm,
      listUnsubscribe: input.listUnsubscribe,
    } satisfies EmailContentInput,
    templateId: draft.template?.id ?? null,
    quotaUnits: recipientCount(recipients),
    quotaPeriod,
    droppedRecipients: dropped,
  };
  return { message, dropped };
}
