import { domainToASCII } from 'node:url';
import addressparser from 'nodemailer/lib/addressparser';

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

export type ParsedMailboxes = { ok: true; mailboxes: Mailbox[] } | { ok: false; error: string };

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
// CR and LF would let a value start a new header; other control characters have no place in an address.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function normaliseAddress(raw: string): string | null {
  const at = raw.lastIndexOf('@');
  if (at <= 0 || at === raw.length - 1 || raw.length > 254) return null;
  const local = raw.slice(0, at);
  const domain = domainToASCII(raw.slice(at + 1).toLowerCase());
  if (local.length > 64 || !LOCAL_PART.test(local)) return null;
  if (!domain || domain.length > 253) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  return `${local}@${domain}`;
}

export function parseMailboxes(input: AddressInput): ParsedMailboxes {
  const parts = typeof input === 'string' ? [input] : [...input];
  const mailboxes: Mailbox[] = [];
  for (const part of parts) {
    if (CONTROL.test(part)) return { ok: false, error: 'Addresses may not contain control characters or line breaks' };
    const parsed = addressparser(part, { flatten: true });
    if (parsed.length === 0) return { ok: false, error: `No address found in "${part}"` };
    for (const entry of parsed) {
      const address = normaliseAddress(entry.address);
      if (!address) return { ok: false, error: `"${entry.address || entry.name}" is not a valid email address` };
      mailboxes.push({ name: entry.name.trim() || null, address });
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
