import type { Sequelize } from 'sequelize';
import { envelopeAddresses, type ReturnPathClaims } from '../core/bounces/return-path';
import { eventOfVerdict, type ParsedReport, refusalVerdict, verdictFor } from '../core/bounces/reports';
import { findReturnPathMessage, recordEventOnMessage, type RecordOutcome, type Suppress } from '../db/repositories/provider-events';
import { moveStatus, type Message } from '../db/repositories/messages';
import type { RefusedRecipient } from '../core/delivery';
import { countProviderEvent } from '../services/metrics/sends';

/**
 * Bounces and complaints of SMTP mail, recorded through the one recorder of provider events
 * (db/repositories/provider-events.ts): the same `bounce`/`complaint`/`delivery_delayed` events, status
 * moves, suppressions and (by the database's triggers) webhooks, campaign metrics and journeys as SES
 * notifications. The recipient is always the one the return path or the refusal names.
 */

const toAddresses = (list: readonly string[]) => envelopeAddresses(list, [], []).map((address) => address.toLowerCase());

/**
 * Recipients refused at SMTP time, recorded right after `sent`: each a bounce (hard for 5.1.x, a bare 550
 * user unknown and the like; soft for policy and temporary refusals), once per recipient however often it
 * runs. A message whose every `to` recipient was refused for good ends `bounced`, soft refusals included:
 * nobody it was addressed to has it.
 */
export async function recordRefusals(
  db: Sequelize,
  suppress: Suppress,
  message: Message,
  provider: string,
  providerMessageId: string,
  refused: readonly RefusedRecipient[],
): Promise<void> {
  const target = { workspaceId: message.workspaceId, messageId: message.id, recipients: [...message.to, ...message.cc, ...message.bcc] };
  for (const refusal of refused) {
    const event = eventOfVerdict(refusalVerdict(refusal.reply, refusal.transient), refusal.address, providerMessageId, 'smtp', null);
    countProviderEvent(provider, 'email', event, await recordEventOnMessage(db, suppress, target, `${provider}-refusal:${refusal.recipientIndex}`, event));
  }
  const refusedForGood = new Set(refused.filter((refusal) => !refusal.transient).map((refusal) => refusal.address.toLowerCase()));
  const to = toAddresses(message.to);
  if (to.length > 0 && to.every((address) => refusedForGood.has(address))) {
    await moveStatus(db, message.workspaceId, message.id, ['sent'], 'bounced');
  }
}

/** What became of a report: recorded, a repeat, nothing to record (an auto-reply), or no such message/recipient. */
export type ReportOutcome = RecordOutcome | 'nothing-reported' | 'unknown-recipient';

/**
 * A report that came back to a VERP return path, recorded for the recipient its token names (the token's
 * MAC was checked at RCPT): a DSN naming another address still bounces only that recipient, never the
 * other address. `notificationId` identifies the report mail, so a redelivery records nothing new.
 */
export async function recordReturnPathReport(
  db: Sequelize,
  suppress: Suppress,
  claims: ReturnPathClaims,
  report: ParsedReport,
  notificationId: string,
): Promise<ReportOutcome> {
  const found = await findReturnPathMessage(db, claims.messageId);
  if (!found) return 'unknown-message';
  const address = envelopeAddresses(found.to, found.cc, found.bcc)[claims.recipientIndex];
  if (!address) return 'unknown-recipient';
  const verdict = verdictFor(report, address);
  if (!verdict) return 'nothing-reported';
  const source = verdict.event === 'complaint' ? 'arf' : 'dsn';
  const event = eventOfVerdict(verdict, address, found.providerMessageId ?? claims.messageId, source, null);
  const outcome = await recordEventOnMessage(db, suppress, found, notificationId, event);
  // The provider that sent the mail the report is about (SMTP's; SES mail's reports come over SNS).
  countProviderEvent(found.provider ?? 'smtp', 'email', event, outcome);
  return outcome;
}
