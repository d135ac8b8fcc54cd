import { type AddressInput, type Mailbox, parseMailboxes } from './addresses';

/** The spec's limit: to + cc + bcc together. */
export const MAX_RECIPIENTS = 50;

export interface Recipients {
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
}

export type RecipientsResult =
  | { ok: true; recipients: Recipients }
  | { ok: false; field: keyof Recipients; error: string }
  | { ok: false; tooMany: number };

/** Parses every address field of a send, and counts recipients against the per-message limit. */
export function parseRecipients(input: {
  to: AddressInput;
  cc?: AddressInput;
  bcc?: AddressInput;
  replyTo?: AddressInput;
}): RecipientsResult {
  const recipients: Recipients = { to: [], cc: [], bcc: [], replyTo: [] };
  for (const field of ['to', 'cc', 'bcc', 'replyTo'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    const parsed = parseMailboxes(value);
    if (!parsed.ok) return { ok: false, field, error: parsed.error };
    recipients[field] = parsed.mailboxes;
  }
  if (recipients.replyTo.length > 10) return { ok: false, field: 'replyTo', error: 'At most 10 reply-to addresses' };
  const count = recipients.to.length + recipients.cc.length + recipients.bcc.length;
  if (count > MAX_RECIPIENTS) return { ok: false, tooMany: count };
  return { ok: true, recipients };
}

/**
 * Removes suppressed copies. Copies of one address in several fields are dropped everywhere; the
 * send goes on while at least one `to` remains (the spec's 409 is only for an empty `to`).
 */
export function dropSuppressed(
  recipients: Recipients,
  suppressed: ReadonlyMap<string, string>,
): { recipients: Recipients; dropped: Array<{ address: string; reason: string }> } {
  const dropped = new Map<string, string>();
  const keep = (list: Mailbox[]) =>
    list.filter((mailbox) => {
      const reason = suppressed.get(mailbox.address.toLowerCase());
      if (reason) dropped.set(mailbox.address, reason);
      return !reason;
    });
  return {
    recipients: { to: keep(recipients.to), cc: keep(recipients.cc), bcc: keep(recipients.bcc), replyTo: recipients.replyTo },
    dropped: [...dropped].map(([address, reason]) => ({ address, reason })),
  };
}

export function recipientCount(recipients: Recipients): number {
  return recipients.to.length + recipients.cc.length + recipients.bcc.length;
}
