import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { createGroupBatcher } from '../../core/group-batcher';
import { type Plan, type PlanName, PLANS, periodKey, quotaExceeded, type UsagePeriod, usagePeriodAt } from '../../core/plans';
import { parseRecipients } from '../../core/recipients';
import { requestHash } from '../../core/request-hash';
import { type AcceptedKey, acceptMessages, findAcceptedAndSuppressed, findAcceptedKey, IdempotencyKeyTaken } from '../../db/repositories/message-acceptance';
import type { DroppedRecipient, NewMessage } from '../../db/repositories/messages';
import { usedInPeriod } from '../../db/repositories/usage';
import { type Draft, draftSend, messageOf, recipientAddresses, type SendChecks } from './draft';
import type { SendEmailInput } from './schemas';

export type { SendChecks } from './draft';

export interface SendServiceDeps {
  db: Sequelize;
  checks: SendChecks;
}

export type SendOutcome =
  | { status: 'accepted'; id: string; droppedRecipients: DroppedRecipient[] }
  | { status: 'duplicate'; id: string; bodyMismatch: boolean }
  | { status: 'failed'; error: AppError };

export interface Sender {
  workspaceId: string;
  plan: PlanName;
}

/** A send ready to be written, with the draft it came from (for its attachments, if refused). */
interface Ready {
  index: number;
  draft: Draft;
  message: NewMessage;
  dropped: DroppedRecipient[];
}

export type Quota = { plan: Plan; period: UsagePeriod };

/** What POST /messages adds to an email it accepts: the contact, and content (the rest of a fallback chain). */
interface Extra {
  contactId?: string | null;
  content?: Record<string, unknown>;
}

/** Drafts made at once within one call: enough to overlap lookups, few enough to be fair to other calls. */
const DRAFT_LANES = 8;

const duplicateOf = (existing: AcceptedKey, hash: string): SendOutcome => ({
  status: 'duplicate',
  id: existing.id,
  bodyMismatch: existing.requestHash !== hash,
});

function refusal(error: unknown): SendOutcome {
  if (error instanceof AppError) return { status: 'failed', error };
  throw error;
}

/** A refused send must not leave the files it stored; failing to remove them must not change the answer. */
const discardAttachments = (draft: Draft) => draft.attachments?.discard().catch(() => undefined);

/** 402 `quota_exceeded` with the period's figures: the answer of every send the plan's quota refuses. */
export async function quotaRefusal(db: Sequelize, workspaceId: string, quota: Quota, units: number): Promise<AppError> {
  return quotaExceeded(quota.plan, await usedInPeriod(db, workspaceId, quota.period), units);
}

export function createSendService({ db, checks }: SendServiceDeps) {
  const quotaRefusalOf = (principal: Sender, quota: Quota, units: number) => quotaRefusal(db, principal.workspaceId, quota, units);

  /** One send on its own: the exact path, used alone and when a group write cannot settle everyone. */
  async function writeOne(principal: Sender, quota: Quota, ready: Ready): Promise<SendOutcome> {
    try {
      if ((await acceptMessages(db, principal.workspaceId, quota, [ready.message])) !== null) {
        return { status: 'accepted', id: ready.message.id, droppedRecipients: ready.dropped };
      }
      await discardAttachments(ready.draft);
      return { status: 'failed', error: await quotaRefusalOf(principal, quota, ready.message.quotaUnits) };
    } catch (error) {
      if (!(error instanceof IdempotencyKeyTaken)) throw error;
      // A concurrent request with the same key committed first: answer as it did.
      await discardAttachments(ready.draft);
      const key = ready.message.idempotencyKey;
      const existing = await findAcceptedKey(db, principal.workspaceId, key);
      if (!existing) throw error;
      return duplicateOf(existing, ready.draft.hash);
    }
  }

  /**
   * Writes ready sends: all together in one statement when the quota covers them all and no key was
   * taken meanwhile (the usual case), else one by one in order, so each gets its own exact answer.
   */
  async function write(principal: Sender, quota: Quota, ready: Ready[], outcomes: SendOutcome[]): Promise<void> {
    if (ready.length > 1) {
      try {
        const used = await acceptMessages(db, principal.workspaceId, quota, ready.map((item) => item.message));
        if (used !== null) {
          for (const item of ready) outcomes[item.index] = { status: 'accepted', id: item.message.id, droppedRecipients: item.dropped };
          return;
        }
      } catch (error) {
        if (!(error instanceof IdempotencyKeyTaken)) throw error;
      }
    }
    for (const item of ready) outcomes[item.index] = await writeOne(principal, quota, item);
  }

  /**
   * Accepts many sends of one workspace, each on its own (a bad one never stops the others), with one
   * read (idempotency keys and suppressions) and, usually, one write for all. Order of checks per send:
   * idempotency first (decisions), then recipients, sender domain, template, attachments, suppression and
   * quota; the message row is the point of acceptance.
   */
  async function acceptMany(
    principal: Sender,
    inputs: readonly SendEmailInput[],
    hashes: ReadonlyArray<string | undefined> = [],
    extras: readonly Extra[] = [],
  ): Promise<SendOutcome[]> {
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
    const ready: Ready[] = [];
    for (const { index, draft } of drafts) {
      try {
        const made = messageOf(draft, randomUUID(), suppressed, periodKey(quota.period));
        const extra = extras[index] ?? {};
        const message = { ...made.message, contactId: extra.contactId ?? null, content: { ...made.message.content, ...extra.content } };
        ready.push({ index, draft, ...made, message });
      } catch (error) {
        await discardAttachments(draft);
        outcomes[index] = refusal(error);
      }
    }
    await write(principal, quota, ready, outcomes);

    if (repeats.length) {
      const settled = await acceptMany(
        principal,
        repeats.map((index) => inputs[index]),
        repeats.map((index) => hashes[index]),
        repeats.map((index) => extras[index] ?? {}),
      );
      repeats.forEach((index, position) => (outcomes[index] = settled[position]));
    }
    return outcomes;
  }

  // Single sends of one workspace that arrive while its previous ones are being written share a write.
  const singles = createGroupBatcher<{ principal: Sender; input: SendEmailInput }, SendOutcome>(
    (_workspaceId, items) => acceptMany(items[0].principal, items.map((item) => item.input)),
    { maxBatch: 100, maxInFlight: 4 },
  );

  return {
    async send(principal: Sender, input: SendEmailInput): Promise<SendOutcome> {
      // A send with attachments may wait seconds on a URL or the file store: it goes alone, so it never
      // holds up the sends it would otherwise be grouped with.
      if (input.attachments?.length) return (await acceptMany(principal, [input]))[0];
      return singles.submit(principal.workspaceId, { principal, input });
    },

    /**
     * An email of POST /messages: the same acceptance, alone, with the hash of the /messages body as the
     * key's request hash, so a repeat of that body is told apart from a different one (bodyMismatch).
     */
    async sendWithHash(principal: Sender, input: SendEmailInput, hash: string, extra: Extra = {}): Promise<SendOutcome> {
      return (await acceptMany(principal, [input], [hash], [extra]))[0];
    },

    /** Items that failed the schema are answered as they are; the rest are accepted together. */
    async sendBatch(principal: Sender, items: ReadonlyArray<SendEmailInput | AppError>): Promise<SendOutcome[]> {
      const valid = items.flatMap((item, index) => (item instanceof AppError ? [] : [{ index, input: item }]));
      const settled = await acceptMany(principal, valid.map(({ input }) => input));
      const outcomes: SendOutcome[] = new Array(items.length);
      items.forEach((item, index) => item instanceof AppError && (outcomes[index] = { status: 'failed', error: item }));
      valid.forEach(({ index }, position) => (outcomes[index] = settled[position]));
      return outcomes;
    },
  };
}

export type SendService = ReturnType<typeof createSendService>;
