import { requestHash } from '../request-hash';

/**
 * The idempotency key of an inbox send or reply that came without one. An agent's double click, or a client
 * retrying a request whose answer it lost, sends the same message twice within moments: the same inbox, the
 * same thread (a reply), the same recipients, subject, body and files. Within this window such a repeat is the
 * first message (200 duplicate, docs/inboxes.md); after it, writing the same words again is a new message.
 */
export const DERIVED_KEY_WINDOW_MS = 10 * 60_000;

/** What makes two sends the same: where from and to, and what they say (the request as given). */
export interface SendIdentity {
  inboxId: string;
  /** `send`, or the thread a reply answers. */
  scope: 'send' | { threadId: string };
  body: unknown;
}

export interface DerivedKeys {
  /** The key of this window: the send is accepted under it unless the previous window's is still fresh. */
  current: string;
  /** The same send's key in the window before, which still counts while its message is younger than the window. */
  previous: string;
  /** The previous window's key holds a repeat only if its message was accepted after this moment. */
  freshSince: Date;
}

const keyOf = (hash: string, window: number) => `inbox-auto:${window}:${hash}`;

/**
 * Windows are fixed slices of time, so two requests racing in one slice meet on the same key and the
 * database's unique index keeps one. A repeat just past a slice's edge is caught by the previous slice's key,
 * so any two sends less than the window apart are one message.
 */
export function derivedSendKeys(identity: SendIdentity, now: Date): DerivedKeys {
  const hash = requestHash(identity);
  const window = Math.floor(now.getTime() / DERIVED_KEY_WINDOW_MS);
  return { current: keyOf(hash, window), previous: keyOf(hash, window - 1), freshSince: new Date(now.getTime() - DERIVED_KEY_WINDOW_MS) };
}
