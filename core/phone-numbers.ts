import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * A phone number in E.164 (`+14155552671`), or null when it is not one. Checked against the numbering plan
 * of the number's country (libphonenumber's full metadata), not only its shape: WhatsApp senders and
 * recipients must be real, dialable numbers, and Twilio refuses the rest only at send time.
 */
export function parseE164(value: string): string | null {
  if (!/^\+[1-9]\d{6,14}$/.test(value)) return null;
  const parsed = parsePhoneNumberFromString(value);
  return parsed?.isValid() ? parsed.number : null;
}
