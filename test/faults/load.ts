import { randomUUID } from 'node:crypto';
import { sleep } from './processes';

/** A workspace the load sends from: its key and a verified domain. */
export interface Sender {
  workspaceId: string;
  apiKey: string;
  domain: string;
}

/** What the clients saw, the evidence the invariant checker judges. */
export interface LoadRecord {
  /** Idempotency key → every message id the API answered for it (more than one is a broken promise). */
  readonly idsByKey: Map<string, Set<string>>;
  /** Message id → its sender's workspace, for every id answered 202 or 200. */
  readonly accepted: Map<string, string>;
  /** Answers by status (or `connection` for a request that got no HTTP answer). */
  readonly statuses: Map<string, number>;
  /** Requests that got neither an answer nor a connection error within REQUEST_TIMEOUT_MS. */
  hung: number;
  /** Keys that never got an answer, even after the load stopped and every client retried them. */
  unanswered: string[];
  /** Unexpected answers (a 4xx other than 429), with their body, at most a few. */
  readonly unexpected: string[];
  /** When a 202 was last answered (epoch ms), for the time to recover. */
  lastAcceptAt: number;
}

/** A request still unanswered after this long counts as hung: the service must answer or drop it. */
export const REQUEST_TIMEOUT_MS = 20_000;
/** After the load stops, how long clients keep retrying the keys still unanswered. */
const SETTLE_RETRIES_MS = 90_000;

export function emptyRecord(): LoadRecord {
  return { idsByKey: new Map(), accepted: new Map(), statuses: new Map(), hung: 0, unanswered: [], unexpected: [], lastAcceptAt: 0 };
}

type Attempt = { answered: true } | { answered: false };

async function attempt(apiUrl: string, sender: Sender, key: string, recipient: string, record: LoadRecord): Promise<Attempt> {
  const count = (status: string) => record.statuses.set(status, (record.statuses.get(status) ?? 0) + 1);
  let response: Response;
  try {
    response = await fetch(`${apiUrl}/api/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sender.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: `Load <load@${sender.domain}>`, to: recipient, subject: 'Fault suite', text: `Message ${key}`, idempotencyKey: key }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      record.hung += 1;
      count('hung');
    } else count('connection');
    return { answered: false };
  }
  count(String(response.status));
  let body: { id?: string };
  try {
    body = (await response.json()) as { id?: string };
  } catch {
    // A body cut off by a dying process: as good as no answer.
    return { answered: false };
  }
  if (response.status === 202 || response.status === 200) {
    if (!body.id) throw new Error(`a ${response.status} without an id`);
    const ids = record.idsByKey.get(key) ?? new Set();
    ids.add(body.id);
    record.idsByKey.set(key, ids);
    record.accepted.set(body.id, sender.workspaceId);
    if (response.status === 202) record.lastAcceptAt = Date.now();
    return { answered: true };
  }
  if (response.status === 429 || response.status >= 500) return { answered: false };
  if (record.unexpected.length < 5) record.unexpected.push(`${response.status} ${JSON.stringify(body)}`);
  return { answered: true };
}

/**
 * Clients that send `POST /emails`, each with a fresh idempotency key per message, retrying a request that
 * got no answer (a connection error, a 5xx, a 429) with the same key until it is answered, as the
 * decisions tell clients to. `stop()` ends new sends and waits until every key in flight is answered.
 */
export function startLoad(apiUrl: string, senders: readonly Sender[], options: { clients: number; pauseMs: number; record?: LoadRecord; tag: string }) {
  const record = options.record ?? emptyRecord();
  let sending = true;
  let stoppedAt = 0;
  let sequence = 0;
  const client = async (index: number) => {
    const sender = senders[index % senders.length];
    while (sending) {
      sequence += 1;
      const key = `${options.tag}-${randomUUID()}`;
      const recipient = `${options.tag}-${sequence}@example.org`;
      for (let tries = 0; ; tries += 1) {
        if ((await attempt(apiUrl, sender, key, recipient, record)).answered) break;
        if (!sending && Date.now() - stoppedAt > SETTLE_RETRIES_MS) {
          record.unanswered.push(key);
          break;
        }
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(tries, 4)));
      }
      await sleep(options.pauseMs);
    }
  };
  const running = Array.from({ length: options.clients }, (_, index) => client(index));
  return {
    record,
    /** Messages accepted so far. */
    acceptedCount: () => record.accepted.size,
    stop: async () => {
      sending = false;
      stoppedAt = Date.now();
      await Promise.all(running);
      return record;
    },
  };
}

export type Load = ReturnType<typeof startLoad>;
