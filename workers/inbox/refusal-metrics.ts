import { Counter } from 'prom-client';
import { messagingMetrics } from '../../services/metrics/registry';
import type { SmtpCallback } from './smtp-session';

/** The SMTP command a refusal answered. */
export type SmtpStage = 'connect' | 'mail' | 'rcpt' | 'data';

/**
 * Why the inbound MX refused, as the class an operator acts on: a surge of `rate` is one client hammering us
 * (or a limit too low), `unknown_recipient` and `relay_denied` are senders guessing addresses (dictionary
 * attacks) or a domain's inboxes deleted while its MX still points here, `sender_refused` is the recipients'
 * own rules (blocked senders, allow lists), `size` and `mailbox_full` are limits, `spool_full` and
 * `temporary` are ours (disk budget, database or blob store away) and want attention at once.
 */
export type RefusalReason =
  | 'rate' | 'unknown_recipient' | 'relay_denied' | 'sender_refused' | 'size' | 'mailbox_full' | 'too_many_recipients'
  | 'no_recipients' | 'spool_full' | 'temporary' | 'other';

const refusals = new Counter({
  name: 'messaging_inbound_smtp_refusals_total',
  help: 'Inbound SMTP commands refused, by stage (connect, mail, rcpt, data) and reason class',
  labelNames: ['stage', 'reason'] as const,
  registers: [messagingMetrics],
});

/**
 * The reason class of a reply, from its enhanced status code (RFC 3463), which every refusal of ours starts
 * its text with (workers/inbox/smtp-session.ts, admission.ts). The text, not an id or address, decides: the
 * label set stays closed.
 */
export function refusalReason(code: number, text: string): RefusalReason {
  const enhanced = /^(\d\.\d{1,3}\.\d{1,3})\b/.exec(text)?.[1] ?? '';
  switch (enhanced) {
    case '4.7.0':
    case '4.7.1':
      return 'rate';
    case '5.1.1':
      return 'unknown_recipient';
    case '5.7.1':
      return text.includes('Relaying denied') ? 'relay_denied' : 'sender_refused';
    case '5.3.4':
    case '5.2.2':
      return 'size';
    case '4.2.2':
      return 'mailbox_full';
    case '4.5.3':
      return 'too_many_recipients';
    case '5.5.1':
      return 'no_recipients';
    case '4.3.1':
      return 'spool_full';
    case '4.3.0':
      return 'temporary';
    default:
      return code === 451 ? 'temporary' : 'other';
  }
}

/** The callback, counting the refusal it is answered with (an error with a reply code); acceptances pass through. */
export function countingRefusals(stage: SmtpStage, callback: SmtpCallback): SmtpCallback {
  return (error) => {
    if (error && 'responseCode' in error && typeof error.responseCode === 'number') refusals.inc({ stage, reason: refusalReason(error.responseCode, error.message) });
    callback(error);
  };
}
