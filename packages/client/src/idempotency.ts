import type { Middleware } from 'openapi-fetch';

/**
 * Sends that take an idempotencyKey in the body (the service has no Idempotency-Key header): one accepted
 * send per key and workspace, forever; a repeat answers 200 duplicate with the first id. `batch` routes key
 * each item of `emails`.
 */
const KEYED_SENDS: Record<string, 'body' | 'batch'> = {
  '/api/v1/emails': 'body',
  '/api/v1/emails/batch': 'batch',
  '/api/v1/messages': 'body',
  // Not a send, but a repeated event triggers automations and records conversions a second time.
  '/api/v1/events': 'body',
};

/**
 * POSTs the service deduplicates without a key: an inbox send or reply repeated with the same body within 10
 * minutes is answered as a duplicate (the service derives a key from the content, which also stops a
 * double-submitted form: a random key here would defeat that), and a draft is sent once. A repeat after a
 * lost response is safe.
 */
const SELF_DEDUPLICATED_POSTS = [/\/api\/v1\/inboxes\/[^/]+\/send$/, /\/api\/v1\/inboxes\/[^/]+\/threads\/[^/]+\/reply$/, /\/api\/v1\/inboxes\/[^/]+\/drafts\/[^/]+\/send$/];

export interface IdempotencyOptions {
  /** Where the generated keys come from (default: crypto.randomUUID, 36 characters; the service takes 8 to 255). */
  generateKey?: () => string;
}

/**
 * Gives every send that has no idempotencyKey a fresh one, before the first attempt, so the retries of one
 * call all carry the same key and the service accepts the send at most once. A key the caller gives is kept.
 */
export function idempotencyKeys(options: IdempotencyOptions = {}): Middleware {
  const generateKey = options.generateKey ?? (() => crypto.randomUUID());
  return {
    async onRequest({ request, schemaPath }) {
      const kind = request.method === 'POST' ? KEYED_SENDS[schemaPath] : undefined;
      if (!kind) return undefined;
      const body = await jsonBody(request);
      if (!isRecord(body)) return undefined;
      let changed = false;
      const keyed = (input: unknown): unknown => {
        if (!isRecord(input) || input.idempotencyKey !== undefined) return input;
        changed = true;
        return { ...input, idempotencyKey: generateKey() };
      };
      const next = kind === 'batch' && Array.isArray(body.emails) ? { ...body, emails: body.emails.map(keyed) } : kind === 'body' ? keyed(body) : body;
      return changed ? new Request(request, { body: JSON.stringify(next) }) : undefined;
    },
  };
}

/**
 * Whether repeating this POST after a lost response cannot send twice: its body carries an idempotencyKey (in
 * every item of a batch), or the service deduplicates the route itself.
 */
export async function repeatableByKey(request: Request): Promise<boolean> {
  const path = new URL(request.url).pathname;
  if (SELF_DEDUPLICATED_POSTS.some((route) => route.test(path))) return true;
  const body = await jsonBody(request);
  if (!isRecord(body)) return false;
  if (Array.isArray(body.emails) && body.emails.length > 0) return body.emails.every((item) => isRecord(item) && typeof item.idempotencyKey === 'string');
  return typeof body.idempotencyKey === 'string';
}

async function jsonBody(request: Request): Promise<unknown> {
  if (!request.body || !(request.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(await request.clone().text()) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
