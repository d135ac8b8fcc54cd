import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { domainOf, formatMailbox, type Mailbox, parseMailboxes } from '../../core/addresses';
import { AppError } from '../../core/errors';
import { PLANS, type PlanName, periodKey, quotaFigures, usagePeriodAt } from '../../core/plans';
import { dropSuppressed, parseRecipients, recipientCount } from '../../core/recipients';
import { requestHash } from '../../core/request-hash';
import { type DroppedRecipient, findByIdempotencyKey, insertMessage } from '../../db/repositories/messages';
import { reserveQuota, usedInPeriod } from '../../db/repositories/usage';
import type { AttachmentRef } from '../../core/attachments';
import type { SendDispatcher } from './dispatch';
import type { SendEmailInput } from './schemas';

/** What acceptance needs from other areas, as functions, so each check stays where its data lives. */
export interface SendChecks {
  /** The sending domain if it is verified for the workspace, with its default display name. */
  verifiedDomain(workspaceId: string, domain: string): Promise<{ defaultFromName: string | null } | null>;
  /** The template and its current version, which the message pins so a later edit cannot change it. */
  templateExists(workspaceId: string, idOrName: string): Promise<{ id: string; versionId: string } | null>;
  /** Suppressed addresses among these (lower-cased), with the reason. */
  suppressed(workspaceId: string, addresses: string[]): Promise<Map<string, string>>;
  /** Checks and stores the send's attachment items; returns references to keep with the message. */
  prepareAttachments(workspaceId: string, items: NonNullable<SendEmailInput['attachments']>): Promise<AttachmentRef[]>;
}

export interface SendServiceDeps {
  db: Sequelize;
  checks: SendChecks;
  dispatcher: SendDispatcher;
}

export type SendOutcome =
  | { status: 'accepted'; id: string; droppedRecipients: DroppedRecipient[] }
  | { status: 'duplicate'; id: string; bodyMismatch: boolean }
  | { status: 'failed'; error: AppError };

export interface Sender {
  workspaceId: string;
  plan: PlanName;
}

class DuplicateRace extends Error {}

function fieldError(field: string, message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });
}

export function createSendService({ db, checks, dispatcher }: SendServiceDeps) {
  async function duplicateOf(workspaceId: string, key: string, hash: string): Promise<SendOutcome | null> {
    const existing = await findByIdempotencyKey(db, workspaceId, key);
    return existing ? { status: 'duplicate', id: existing.id, bodyMismatch: existing.requestHash !== hash } : null;
  }

  async function sender(workspaceId: string, from: string): Promise<Mailbox> {
    const parsed = parseMailboxes(from);
    if (!parsed.ok || parsed.mailboxes.length !== 1) throw fieldError('from', parsed.ok ? 'Give exactly one sender' : parsed.error);
    const mailbox = parsed.mailboxes[0];
    const domain = await checks.verifiedDomain(workspaceId, domainOf(mailbox.address));
    if (!domain) throw new AppError('domain_not_verified', `The domain ${domainOf(mailbox.address)} is not verified for this workspace`);
    return mailbox.name || !domain.defaultFromName ? mailbox : { ...mailbox, name: domain.defaultFromName };
  }

  /**
   * Accepts one send or says why not; never throws for the send's own faults, so a batch maps it over
   * its items. Order of checks: idempotency first (decisions), then recipients, sender domain,
   * template, attachments, suppression and quota; the message row is the point of acceptance.
   */
  async function accept(principal: Sender, input: SendEmailInput): Promise<SendOutcome> {
    const { workspaceId } = principal;
    const hash = requestHash(input);
    try {
      const repeat = await duplicateOf(workspaceId, input.idempotencyKey, hash);
      if (repeat) return repeat;

      const parsed = parseRecipients(input);
      if (!parsed.ok && 'tooMany' in parsed) {
        throw new AppError('too_many_recipients', `to + cc + bcc may hold at most 50 recipients; got ${parsed.tooMany}`);
      }
      if (!parsed.ok) throw fieldError(parsed.field, parsed.error);
      const from = await sender(workspaceId, input.from);
      const template = input.templateId ? await checks.templateExists(workspaceId, input.templateId) : null;
      if (input.templateId && !template) throw new AppError('template_not_found', `No template ${input.templateId}`);
      const attachmentRefs = input.attachments?.length ? await checks.prepareAttachments(workspaceId, input.attachments) : [];

      const all = [...parsed.recipients.to, ...parsed.recipients.cc, ...parsed.recipients.bcc];
      const suppressed = await checks.suppressed(workspaceId, [...new Set(all.map((m) => m.address.toLowerCase()))]);
      const { recipients, dropped } = dropSuppressed(parsed.recipients, suppressed);
      if (recipients.to.length === 0) {
        const reasons = dropped.map((entry) => `${entry.address} (${entry.reason})`).join(', ');
        throw new AppError('suppressed', `Every to recipient is suppressed: ${reasons}`, { droppedRecipients: dropped });
      }

      const id = randomUUID();
      const units = recipientCount(recipients);
      const period = usagePeriodAt(new Date());
      const plan = PLANS[principal.plan];
      await db.transaction(async (transaction) => {
        const used = await reserveQuota(db, workspaceId, plan, period, units, transaction);
        if (used === null) {
          const figures = quotaFigures(plan, await usedInPeriod(db, workspaceId, period));
          throw new AppError('quota_exceeded', `This send needs ${units} messages; ${figures.remaining} remain this month`, {
            resource: 'messages',
            limit: figures.limit,
            used: figures.used,
            remaining: figures.remaining,
            plan: plan.name,
          });
        }
        const inserted = await insertMessage(db, workspaceId, {
          id,
          kind: 'transactional',
          channel: 'email',
          idempotencyKey: input.idempotencyKey,
          requestHash: hash,
          fromAddress: formatMailbox(from),
          to: recipients.to.map(formatMailbox),
          cc: recipients.cc.map(formatMailbox),
          bcc: recipients.bcc.map(formatMailbox),
          subject: input.subject ?? null,
          content: {
            html: input.html,
            text: input.text,
            templateVersionId: template?.versionId,
            variables: input.variables,
            replyTo: recipients.replyTo.map(formatMailbox),
            attachments: attachmentRefs,
            disableTracking: input.disableTracking,
            disableUtm: input.disableUtm,
          },
          templateId: template?.id ?? null,
          quotaUnits: units,
          quotaPeriod: periodKey(period),
          droppedRecipients: dropped,
        }, transaction);
        // A concurrent request with the same key committed first: roll back our reservation and answer as it.
        if (!inserted) throw new DuplicateRace();
      });
      return { status: 'accepted', id, droppedRecipients: dropped };
    } catch (error) {
      if (error instanceof DuplicateRace) {
        const repeat = await duplicateOf(workspaceId, input.idempotencyKey, hash);
        if (repeat) return repeat;
      }
      if (error instanceof AppError) return { status: 'failed', error };
      throw error;
    }
  }

  return {
    async send(principal: Sender, input: SendEmailInput): Promise<SendOutcome> {
      const outcome = await accept(principal, input);
      if (outcome.status === 'accepted') await dispatcher.dispatch([{ workspaceId: principal.workspaceId, messageId: outcome.id }]);
      return outcome;
    },

    /**
     * Each item on its own (a bad item never stops the others), a few at a time; the accepted ones are
     * dispatched together at the end.
     */
    async sendBatch(principal: Sender, items: ReadonlyArray<SendEmailInput | AppError>): Promise<SendOutcome[]> {
      const outcomes: SendOutcome[] = new Array(items.length);
      let next = 0;
      const lane = async () => {
        for (let index = next++; index < items.length; index = next++) {
          const item = items[index];
          outcomes[index] = item instanceof AppError ? { status: 'failed', error: item } : await accept(principal, item);
        }
      };
      await Promise.all(Array.from({ length: Math.min(BATCH_LANES, items.length) }, lane));
      const accepted = outcomes.flatMap((outcome) => (outcome.status === 'accepted' ? [outcome.id] : []));
      await dispatcher.dispatch(accepted.map((messageId) => ({ workspaceId: principal.workspaceId, messageId })));
      return outcomes;
    },
  };
}

/** Items of one batch accepted concurrently: enough to overlap database round trips, few enough to be fair. */
const BATCH_LANES = 8;

export type SendService = ReturnType<typeof createSendService>;
