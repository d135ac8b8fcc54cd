import addressparser from 'nodemailer/lib/addressparser';
import { type Normalised, normaliseEmail } from './identities';

/**
 * Recipients and senders: `address`, `Display Name <address>`, several in one string separated by
 * commas (a comma inside a quoted display name does not separate), or an array of those. Splitting is
 * nodemailer's RFC 5322 address parser; every mailbox is then checked strictly, because that parser is
 * lenient by design (it would, for instance, read a header injection as a different recipient).
 */
export interface Mailbox {
  name: string | null;
  /** The local part as given, the domain lower-cased in its ASCII (punycode) form. */
  address: string;
}

export type AddressInput = string | readonly string[];

/** RFC 5322 caps a line at 998 characters: no one address, display name included, needs more. */
export const MAX_MAILBOX_CHARS = 998;

export type ParsedMailboxes = { ok: true; mailboxes: Mailbox[] } | { ok: false; error: string };

// CR and LF would let a value start a new header; other control characters have no place in an address.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The address to send to: validated by the same rules as a contact's email identity, with the domain in
 * its lower-case ASCII form. Unlike the identity key, the local part keeps the sender's casing, as written.
 */
export function normaliseAddress(raw: string): Normalised {
  const checked = normaliseEmail(raw);
  if (!checked.ok) return checked;
  const given = raw.trim();
  return { ok: true, address: `${given.slice(0, given.lastIndexOf('@'))}@${domainOf(checked.address)}` };
}

export function parseMailboxes(input: AddressInput): ParsedMailboxes {
  const parts = typeof input === 'string' ? [input] : [...input];
  const mailboxes: Mailbox[] = [];
  for (const part of parts) {
    if (CONTROL.test(part)) return { ok: false, error: 'Addresses may not contain control characters or line breaks' };
    const parsed = addressparser(part, { flatten: true });
    if (parsed.length === 0) return { ok: false, error: `No address found in "${part}"` };
    for (const entry of parsed) {
      const normalised = normaliseAddress(entry.address);
      if (!normalised.ok) return { ok: false, error: `"${entry.address || entry.name}" is not a valid email address: ${normalised.reason}` };
      mailboxes.push({ name: entry.name.trim() || null, address: normalised.address });
    }
  }
  return { ok: true, mailboxes };
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

/** The form shown in headers and API answers: `"Name" <address>` or the bare address. */
export function formatMailbox(mailbox: Mailbox): string {
  if (!mailbox.name) return mailbox.address;
  const quoted = /[(),.:;<>@[\]\\"]/.test(mailbox.name) ? `"${mailbox.name.replace(/(["\\])/g, '\\$1')}"` : mailbox.name;
  return `${quoted} <${mailbox.address}>`;
}
