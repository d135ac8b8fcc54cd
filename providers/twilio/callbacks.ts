import twilio from 'twilio';
import { type ChatStatusEvent, chatStatusEvent } from '../../core/delivery';
import { parseE164 } from '../../core/phone-numbers';

/** A callback's form parameters, as Express's urlencoded parser hands them over. */
export type TwilioForm = Record<string, unknown>;

const field = (body: TwilioForm, name: string): string => (typeof body[name] === 'string' ? body[name] : '');

/**
 * Whether `X-Twilio-Signature` is the account's signature of this callback: Twilio signs the full URL it was
 * given (under PUBLIC_BASE_URL, not the one this process sees) and the form parameters, with the auth token.
 */
export function twilioSignatureValid(authToken: string, signature: string, url: string, body: TwilioForm): boolean {
  return signature !== '' && twilio.validateRequest(authToken, signature, url, body);
}

/** A status callback (`/status`) in the delivery vocabulary; `event` is null for a status that is not one. */
export interface TwilioStatus {
  messageSid: string;
  /** Twilio's MessageStatus as sent (`delivered`, `undelivered`, ...): stored with the event. */
  status: string;
  event: ChatStatusEvent | null;
  /** Twilio's ErrorCode on failed/undelivered statuses (21610, 63016, ...: core/chat-refusals.ts). */
  errorCode: number | null;
}

export function twilioStatusOf(body: TwilioForm): TwilioStatus {
  const status = field(body, 'MessageStatus');
  return {
    messageSid: field(body, 'MessageSid'),
    status,
    event: chatStatusEvent(status),
    errorCode: /^\d{1,6}$/.test(field(body, 'ErrorCode')) ? Number(field(body, 'ErrorCode')) : null,
  };
}

/** A customer's message (`/inbound`); null when its sender is no phone number. */
export interface TwilioInbound {
  /** The customer's number, E.164, without Twilio's `whatsapp:` prefix. */
  from: string;
  text: string | null;
  media: number;
  /** Twilio's MessageSid; null when the callback names none. */
  providerMessageId: string | null;
}

export function twilioInboundOf(body: TwilioForm): TwilioInbound | null {
  const from = parseE164(field(body, 'From').replace(/^whatsapp:/, ''));
  if (!from) return null;
  return { from, text: field(body, 'Body') || null, media: Number(field(body, 'NumMedia')) || 0, providerMessageId: field(body, 'MessageSid') || null };
}
