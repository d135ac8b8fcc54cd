/**
 * Threading of inbox messages (decisions.md: by In-Reply-To/References, then by subject within the same
 * correspondents, where a correspondent is one the thread can vouch for: see chooseThread). Pure: the
 * workflow's activity looks up candidates and asks these functions which one wins.
 */

/** Reply and forward prefixes of common clients and languages (Re, Fwd, Fw, AW, WG, SV, VS, Antw, RIF, TR, Réf). */
const PREFIX = /^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|rif|tr|réf|ref)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]|\[[^\]]*\])\s*/i;

/** The subject with reply/forward prefixes and list tags removed, whitespace collapsed, lower-cased. */
export function normalizeSubject(subject: string | null | undefined): string {
  let rest = (subject ?? '').replace(/\s+/g, ' ').trim();
  for (let previous = ''; previous !== rest; ) {
    previous = rest;
    rest = rest.replace(PREFIX, '');
  }
  return rest.trim().toLowerCase();
}

/**
 * The message ids in a Message-ID, In-Reply-To or References value, in order, without angle brackets, each
 * once. Ids in brackets are taken as they are; a value with no brackets at all (some clients) is split on
 * whitespace and keeps the tokens that look like ids (`local@domain`). Comments and phrases are dropped.
 */
export function parseMessageIds(value: string | null | undefined): string[] {
  if (!value) return [];
  const bracketed = [...value.matchAll(/<([^<>\s]+)>/g)].map((match) => match[1]);
  const ids = bracketed.length ? bracketed : value.split(/[\s,]+/).filter((token) => /^[^@\s<>()]+@[^@\s<>()]+$/.test(token));
  return [...new Set(ids.map(normalizeMessageId))];
}

/** Message ids compare with the domain part lower-cased (RFC 5322's id-right is case-insensitive in practice). */
export function normalizeMessageId(id: string): string {
  const trimmed = id.trim().replace(/^<|>$/g, '');
  const at = trimmed.lastIndexOf('@');
  return at < 0 ? trimmed : `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}

/**
 * The ids to look for, most telling first: In-Reply-To (the message answered), then References from the
 * newest back to the root, so the nearest known ancestor decides the thread.
 */
export function threadingReferences(inReplyTo: string | null | undefined, references: string | readonly string[] | null | undefined): string[] {
  const referenced = typeof references === 'string' || references == null ? parseMessageIds(references) : references.flatMap((value) => parseMessageIds(value));
  return [...new Set([...parseMessageIds(inReplyTo), ...referenced.reverse()])];
}

/**
 * SES replaces the Message-ID of what it sends with `<providerId@region.amazonses.com>` (`@email.amazonses.com`
 * in us-east-1). A reply then references that form, so it is mapped back to the provider id we stored.
 */
const SES_ID = /^([0-9a-z-]+)@(?:email|[a-z]{2}-[a-z]+-\d)\.amazonses\.com$/i;

export function sesProviderIdOf(messageId: string): string | null {
  const match = SES_ID.exec(normalizeMessageId(messageId));
  return match ? match[1] : null;
}

export function sesMessageIdHeader(providerId: string, region: string): string {
  return `${providerId}@${region === 'us-east-1' ? 'email' : region}.amazonses.com`;
}

export interface SubjectCandidate {
  threadId: string;
  normalizedSubject: string;
  /**
   * Whether the message's From is a vouched participant of the thread: we wrote to it there, or it wrote there
   * with an authenticated From. Not threads.participants, which also holds what unauthenticated mail put in To and Cc.
   */
  senderVouched: boolean;
  lastMessageAt: Date;
}

/** A thread one of the message's references was found in. */
export interface ReferencedThread {
  threadId: string;
  /** threads.participants: everyone in the conversation, as shown, lower-case. */
  participants: readonly string[];
}

export interface ThreadQuery {
  /** threadingReferences of the message, and the thread each one was found in (absent: not ours). */
  references: readonly string[];
  threadByReference: ReadonlyMap<string, ReferencedThread>;
  normalizedSubject: string;
  /** The message's From, and whether it is authenticated (sender-authentication.ts). */
  sender: { address: string | null; authenticated: boolean };
  candidates: readonly SubjectCandidate[];
  now: Date;
  /** Subject threading only joins threads this recent: an old "Hello" is a new conversation. */
  subjectWindowMs: number;
}

export type ThreadChoice = { threadId: string; by: 'reference' | 'subject' } | null;

export const SUBJECT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

const lower = (address: string) => address.trim().toLowerCase();

/**
 * Which existing thread a message joins, or null for a new thread. A reference is a Message-ID only the thread's
 * correspondents were sent, so it joins on its own when the sender is authenticated. From an unauthenticated
 * sender it joins only when the From it claims is already in the thread: a leaked or guessed id then still
 * cannot put a stranger into the conversation, since the agent's reply goes to that From, a participant. A
 * subject proves nothing: it joins only the thread in which the authenticated From is a vouched participant;
 * what the message put in To and Cc never counts, since anyone can write anything there.
 */
export function chooseThread(query: ThreadQuery): ThreadChoice {
  const from = query.sender.address ? lower(query.sender.address) : null;
  for (const reference of query.references) {
    const thread = query.threadByReference.get(normalizeMessageId(reference));
    if (!thread) continue;
    if (query.sender.authenticated || (from && thread.participants.some((address) => lower(address) === from))) return { threadId: thread.threadId, by: 'reference' };
  }
  // An empty subject says nothing about the conversation: never thread on it.
  if (!query.normalizedSubject || !query.sender.authenticated || !from) return null;
  const match = [...query.candidates]
    .filter((candidate) => candidate.normalizedSubject === query.normalizedSubject)
    .filter((candidate) => query.now.getTime() - candidate.lastMessageAt.getTime() <= query.subjectWindowMs)
    .filter((candidate) => candidate.senderVouched)
    .sort((a, b) => b.lastMessageAt.getTime() - a.lastMessageAt.getTime())[0];
  return match ? { threadId: match.threadId, by: 'subject' } : null;
}
