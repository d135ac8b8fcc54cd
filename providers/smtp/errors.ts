import { PermanentSendError, ProviderUnavailableError } from '../../core/delivery';

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** nodemailer's codes (and the socket's own) for a relay that cannot be reached or talked to at all. */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EAUTH', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/** 4xx answers that speak of the sender's volume, not of one message or recipient (not "try again later": greylisting says that). */
const THROTTLING = /throttl|rate limit|too many (connections|messages|mails|emails|requests)|slow down|temporarily rate/i;

/**
 * An SMTP failure in the send path's terms: 5xx is the server's final answer for this message (permanent);
 * the relay unreachable, a 421 (service not available, closing) or a 4xx that speaks of throttling is the
 * provider itself (counted by the route's breaker); any other 4xx (a greylisted recipient, a full mailbox)
 * is this message's own transient failure, retried from the outbox with backoff.
 */
export function classifySmtpFailure(error: unknown): unknown {
  const smtp = error as SmtpError;
  const code = smtp?.responseCode;
  const text = `${smtp?.message ?? ''} ${smtp?.response ?? ''}`;
  if (code !== undefined && code >= 500) return new PermanentSendError(`SMTP ${code}: ${smtp.message}`);
  if (code === 421 || code === 454 || (code !== undefined && code >= 400 && THROTTLING.test(text))) {
    return new ProviderUnavailableError(`SMTP ${code}: ${smtp.message}`, { cause: error });
  }
  if (code === undefined && smtp?.code && CONNECTION_CODES.has(smtp.code)) {
    return new ProviderUnavailableError(`SMTP relay unreachable (${smtp.code}): ${smtp.message}`, { cause: error });
  }
  return error;
}
