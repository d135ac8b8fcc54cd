import { randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors';
import { createGroupBatcher, type GroupBatcher } from '../../core/group-batcher';
import { periodKey, PLANS, usagePeriodAt } from '../../core/plans';
import { parseRecipients } from '../../core/recipients';
import { requestHash } from '../../core/request-hash';
import { findAcceptedAndSuppressed } from '../../db/repositories/message-acceptance';
import { currentTraceparent } from '../../infra/trace-context';
import { type Draft, draftSend, messageOf, recipientAddresses, type SendChecks, type SendEmailInput } from './email-draft';
import { countOutcomes } from './metrics';
import { duplicateOf, type Quota, type Sender, type SendOutcome } from './outcome';
import { type AcceptanceWriter, type ReadyMessage, writeMessages } from './write';

export interface EmailAcceptanceDeps extends AcceptanceWriter {
  checks: SendChecks;
}

/** What POST /messages adds to an email it accepts: the contact, and content (the rest of a fallback chain). */
export interface Extra {
  contactId?: string | null;
  content?: Record<string, unknown>;
  /** The accepting request's trace context, taken where the request's span is active (single sends are grouped after). */
  traceparent?: string | null;
}

/** Drafts made at once within one call: enough to overlap lookups, few enough to be fair to other calls. */
const DRAFT_LANES = 8;

function refusal(error: unknown): SendOutcome {
  if (error instanceof AppError) return { status: 'failed', error };
  throw error;
}

/** A refused send must not leave the files it stored; failing to remove them must not change the answer. */
const discardAttachments = (draft: Draft) => draft.attachments?.discard().catch(() => undefined);

/**
 * Accepts many sends of one workspace, each on its own (a bad one never stops the others), with one
 * read (idempotency keys and suppressions) and, usually, one write for all. Order of checks per send:
 * idempotency first (decisions), then recipients, sender domain, template, attachments, suppression and
 * quota; the message row is the point of acceptance.
 */
export async function acceptEmails(
  deps: EmailAcceptanceDeps,
  principal: Sender,
  inputs: readonly SendEmailInput[],
  hashes: ReadonlyArray<string | undefined> = [],
  extras: readonly Extra[] = [],
): Promise<SendOutcome[]> {
  const { db, checks } = deps;
  const { workspaceId } = principal;
  const outcomes: SendOutcome[] = new Array(inputs.length);
  // A key repeated within the call is settled after its first use, as a duplicate of it (or on its own).
  const firstOfKey = new Map<string, number>();
  const repeats: number[] = [];
  inputs.forEach((input, index) => (firstOfKey.has(input.idempotencyKey) ? repeats.push(index) : firstOfKey.set(input.idempotencyKey, index)));
  // Recipients are parsed first so that suppressions are read in the same query as the keys.
  const firsts = [...firstOfKey.values()];
  const parsed = new Map(firsts.map((index) => [index, parseRecipients(inputs[index])]));
  const addresses = new Set([...parsed.values()].flatMap(recipientAddresses));
  const { accepted, suppressed } = await findAcceptedAndSuppressed(db, workspaceId, [...firstOfKey.keys()], [...addresses]);

  const drafts: Array<{ index: number; draft: Draft }> = [];
  const lane = async () => {
    for (let index = firsts.shift(); index !== undefined; index = firsts.shift()) {
      const input = inputs[index];
      const hash = hashes[index] ?? requestHash(input);
      const existing = accepted.get(input.idempotencyKey);
      if (existing) outcomes[index] = duplicateOf(existing, hash);
      else {
        await draftSend(checks, workspaceId, input, hash, parsed.get(index)).then(
          (draft) => drafts.push({ index, draft }),
          (error: unknown) => (outcomes[index] = refusal(error)),
        );
      }
    }
  };
  await Promise.all(Array.from({ length: DRAFT_LANES }, lane));
  drafts.sort((a, b) => a.index - b.index);

  // One period for the whole call: the messages' quota_period is the counter they were reserved on.
  const quota: Quota = { plan: PLANS[principal.plan], period: usagePeriodAt(new Date()) };
  const ready: Array<ReadyMessage & { index: number }> = [];
  for (const { index, draft } of drafts) {
    try {
      const made = messageOf(draft, randomUUID(), suppressed, periodKey(quota.period));
      const extra = extras[index] ?? {};
      const message = {
        ...made.message,
        contactId: extra.contactId ?? null,
        content: { ...made.message.content, ...extra.content },
        traceparent: extra.traceparent !== undefined ? extra.traceparent : currentTraceparent(),
      };
      ready.push({ index, message, hash: draft.hash, dropped: made.dropped, discard: () => discardAttachments(draft) });
    } catch (error) {
      await discardAttachments(draft);
      outcomes[index] = refusal(error);
    }
  }
  const written = await writeMessages(deps, workspaceId, quota, ready);
  ready.forEach((item, position) => (outcomes[item.index] = written[position]));

  if (repeats.length) {
    const settled = await acceptEmails(
      deps,
      principal,
      repeats.map((index) => inputs[index]),
      repeats.map((index) => hashes[index]),
      repeats.map((index) => extras[index] ?? {}),
    );
    repeats.forEach((index, position) => (outcomes[index] = settled[position]));
  }
  return outcomes;
}

export interface SingleSend {
  principal: Sender;
  input: SendEmailInput;
  traceparent: string | null;
}

/** Single sends of one workspace that arrive while its previous ones are being written share a write. */
export function singleSends(deps: EmailAcceptanceDeps): GroupBatcher<SingleSend, SendOutcome> {
  return createGroupBatcher<SingleSend, SendOutcome>(
    (_workspaceId, items) => acceptEmails(deps, items[0].principal, items.map((item) => item.input), [], items.map((item) => ({ traceparent: item.traceparent }))),
    { maxBatch: 100, maxInFlight: 4 },
  );
}

/** The deps with the batcher single sends share: what acceptEmail works with. */
export interface EmailAccepting extends EmailAcceptanceDeps {
  singles: GroupBatcher<SingleSend, SendOutcome>;
}

/** One email: grouped with the workspace's other single sends of the moment into one write. */
export async function acceptEmail(accepting: EmailAccepting, principal: Sender, input: SendEmailInput): Promise<SendOutcome> {
  // A send with attachments may wait seconds on a URL or the file store: it goes alone, so it never
  // holds up the sends it would otherwise be grouped with.
  if (input.attachments?.length) return (await acceptEmails(accepting, principal, [input]))[0];
  return accepting.singles.submit(principal.workspaceId, { principal, input, traceparent: currentTraceparent() });
}

/**
 * An email of POST /messages: the same acceptance, alone, with the hash of the /messages body as the
 * key's request hash, so a repeat of that body is told apart from a different one (bodyMismatch).
 */
export async function acceptEmailWithHash(deps: EmailAcceptanceDeps, principal: Sender, input: SendEmailInput, hash: string, extra: Extra = {}): Promise<SendOutcome> {
  return (await acceptEmails(deps, principal, [input], [hash], [extra]))[0];
}

/** Items that failed the schema are answered as they are; the rest are accepted together. */
export async function acceptEmailBatch(deps: EmailAcceptanceDeps, principal: Sender, items: ReadonlyArray<SendEmailInput | AppError>): Promise<SendOutcome[]> {
  const valid = items.flatMap((item, index) => (item instanceof AppError ? [] : [{ index, input: item }]));
  const settled = await acceptEmails(deps, principal, valid.map(({ input }) => input));
  const outcomes: SendOutcome[] = new Array(items.length);
  items.forEach((item, index) => item instanceof AppError && (outcomes[index] = { status: 'failed', error: item }));
  valid.forEach(({ index }, position) => (outcomes[index] = settled[position]));
  return outcomes;
}

/**
 * The acceptance of email (POST /emails, its batch, email through POST /messages): drafting per send
 * (email-draft.ts), then one lookup and, usually, one write for all (write.ts).
 */
export function createEmailAcceptance(deps: EmailAcceptanceDeps) {
  const accepting: EmailAccepting = { ...deps, singles: singleSends(deps) };
  // Counted here, at the entries, not in acceptEmails: it calls itself for keys repeated within a call.
  const count = <T extends SendOutcome | SendOutcome[]>(outcomes: T): T => {
    countOutcomes('email', 'transactional', Array.isArray(outcomes) ? outcomes : [outcomes]);
    return outcomes;
  };
  return {
    send: async (principal: Sender, input: SendEmailInput) => count(await acceptEmail(accepting, principal, input)),
    sendWithHash: async (principal: Sender, input: SendEmailInput, hash: string, extra: Extra = {}) =>
      count(await acceptEmailWithHash(deps, principal, input, hash, extra)),
    sendBatch: async (principal: Sender, items: ReadonlyArray<SendEmailInput | AppError>) => count(await acceptEmailBatch(deps, principal, items)),
  };
}

export type EmailAcceptance = ReturnType<typeof createEmailAcceptance>;
