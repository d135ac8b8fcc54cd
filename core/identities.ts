import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { domainToASCII } from 'node:url';

/** Channels a contact can be reached on; each identity is an address on one of them. */
export const CHANNELS = ['email', 'whatsapp', 'telegram'] as const;
export type Channel = (typeof CHANNELS)[number];

/** `unknown` until declared: the service never assumes an opt-in. */
export const CONSENTS = ['unknown', 'opted_in', 'opted_out'] as const;
export type Consent = (typeof CONSENTS)[number];

export type Normalised = { ok: true; address: string } | { ok: false; reason: string };

const fail = (reason: string): Normalised => ({ ok: false, reason });

// RFC 5322 dot-atom: quoted local parts and comments are legal but no real mailbox needs them.
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * An email address as the natural key of a contact. The whole address is lower-cased: the domain is
 * case-insensitive by definition, and although RFC 5321 lets a server treat the local part
 * case-sensitively, no mainstream provider does, so `Ann@x.com` and `ann@x.com` are one person.
 * Dots and `+tags` are kept: they are distinct mailboxes at most providers. Internationalised domains
 * are stored in their ASCII (punycode) form.
 */
export function normaliseEmail(input: string): Normalised {
  const trimmed = input.trim();
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1) return fail('Expected an address like name@example.com');
  const local = trimmed.slice(0, at).toLowerCase();
  if (local.length > 64) return fail('The part before @ is longer than 64 characters');
  if (!LOCAL_PART.test(local)) return fail('The part before @ has characters an address cannot have');
  const domain = domainToASCII(trimmed.slice(at + 1).toLowerCase());
  const labels = domain.split('.');
  if (!domain || labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) {
    return fail('The domain is not a valid domain name');
  }
  if (/^\d+$/.test(labels[labels.length - 1])) return fail('The domain is not a valid domain name');
  const address = `${local}@${domain}`;
  if (address.length > 254) return fail('The address is longer than 254 characters');
  return { ok: true, address };
}

/**
 * A phone number in E.164 (`+14155550100`). It must be written with its country code (a leading `+`,
 * or `00`), since a bare national number is ambiguous. A Twilio-style `whatsapp:` prefix is accepted.
 */
export function normalisePhone(input: string): Normalised {
  let text = input.trim().replace(/^whatsapp:/i, '');
  if (text.startsWith('00')) text = `+${text.slice(2)}`;
  if (!text.startsWith('+')) return fail('Expected an international number with its country code, like +14155550100');
  const phone = parsePhoneNumberFromString(text);
  if (!phone || !phone.isValid()) return fail('Not a valid phone number');
  if (phone.ext) return fail('A phone number with an extension cannot receive messages');
  return { ok: true, address: phone.number };
}

/**
 * A Telegram chat id: the integer the Bot API gives for a user or group (groups are negative). Bots can
 * only message a person by this id, never by @username, so usernames are refused.
 */
export function normaliseTelegramChatId(input: string): Normalised {
  const text = input.trim();
  if (!/^-?\d{1,20}$/.test(text)) return fail('Expected a numeric Telegram chat id');
  const canonical = BigInt(text).toString();
  if (canonical === '0') return fail('Expected a numeric Telegram chat id');
  return { ok: true, address: canonical };
}

export function normaliseAddress(channel: Channel, input: string): Normalised {
  switch (channel) {
    case 'email':
      return normaliseEmail(input);
    case 'whatsapp':
      return normalisePhone(input);
    case 'telegram':
      return normaliseTelegramChatId(input);
  }
}

/**
 * Where an address is given without its channel (a suppression path, a list filter), the forms are
 * disjoint: an email has an @, a phone number starts with + (or 00), a chat id is a bare integer.
 */
export function addressCandidates(input: string): Array<{ channel: Channel; address: string }> {
  const found: Array<{ channel: Channel; address: string }> = [];
  for (const channel of CHANNELS) {
    const normalised = normaliseAddress(channel, input);
    if (normalised.ok) found.push({ channel, address: normalised.address });
  }
  return found;
}
