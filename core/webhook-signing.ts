import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signing (decisions: "Webhooks"). A secret is `whsec_` + base64 of random bytes;
 * the key is those bytes. Each request carries `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret that signs,
 * separated by spaces, so a receiver that knows any one of them verifies the request.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The spec asks for 24 or more; 32 is the HMAC-SHA256 block's natural key size. */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('not a webhook secret');
  return Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
}

/** One `v1,<base64>` signature of the request. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt, signed with every secret given (the current one first). */
export function webhookHeaders(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' '),
  };
}
