/**
 * The delivery engine's rules, as pure functions (docs/delivery.md): which messages are handed to Temporal,
 * how many at once, and in what order. The outbox in Postgres is the queue; Temporal holds only the work
 * in flight, so its load stays proportional to what the providers can take.
 */

export type MessageKind = 'transactional' | 'campaign' | 'automation';

/** A message the dispatcher took from the outbox, with what its workflow start needs. */
export interface DispatchedMessage {
  messageId: string;
  workspaceId: string;
  kind: MessageKind;
  channel: string;
  contactId: string | null;
  campaignId: string | null;
  enrollmentId: string | null;
  /** How often it was handed back to the outbox before (0 the first time): names its workflow. */
  round: number;
  /** The accepting request's trace context (infra/trace-context.ts), which its workflow start joins. */
  traceparent?: string | null;
}

/**
 * Dispatch classes. Transactional messages (password resets, receipts) get one workflow each, which
 * operators inspect and retry in the Temporal UI; bulk messages (campaigns, journeys) travel in batches,
 * one activity call per batch, so Temporal's cost per message is amortized.
 */
export type DispatchClass = 'transactional' | 'bulk';

export function dispatchClassOf(kind: MessageKind): DispatchClass {
  return kind === 'transactional' ? 'transactional' : 'bulk';
}

/**
 * Temporal task-queue priority (1 runs first): the control plane (domain checks, webhooks, reconcilers),
 * then transactional sends, journeys, campaigns. Whatever does wait in Temporal waits in this order.
 */
export const TEMPORAL_PRIORITY = { control: 1, transactional: 2, automation: 3, campaign: 4 } as const;

export function temporalPriorityOf(kind: MessageKind): number {
  return TEMPORAL_PRIORITY[kind];
}

export interface InFlightSettings {
  /** Messages per second the channel's provider takes. */
  ratePerSecond: number;
  /** How far ahead of the provider transactional work is handed to Temporal. */
  leadTimeMs: number;
  /** The same for bulk work, which travels in batches of `batchSize`. */
  bulkLeadTimeMs: number;
  batchSize: number;
  /** Never fewer in flight than this, so a slow provider's answers do not idle it. */
  minimum: number;
  /**
   * Never more transactional messages in flight than this: each is a workflow of its own, and past what
   * Temporal works through in a second or two, more in flight only queues inside Temporal.
   */
  maximum: number;
}

/**
 * How many messages of each class may be in flight (handed to Temporal, not finished) on one channel: what
 * the provider can take within the lead time. Bulk work gets at least one whole batch. The classes have
 * separate budgets so a campaign in flight never keeps a password reset out of Temporal.
 */
export function inFlightBounds(settings: InFlightSettings): Record<DispatchClass, number> {
  const ahead = (ms: number) => Math.ceil((settings.ratePerSecond * ms) / 1000);
  return {
    transactional: Math.min(settings.maximum, Math.max(settings.minimum, ahead(settings.leadTimeMs))),
    bulk: Math.max(settings.batchSize, ahead(settings.bulkLeadTimeMs)),
  };
}

/**
 * The least room a dispatch round waits for before it claims. Transactional messages go one by one. Bulk
 * ones wait for half a batch: as a slow provider frees one slot at a time, claiming at once would start a
 * batch workflow per message (11 history events each); half a batch keeps Temporal's cost per 1,000 bulk
 * messages under 50, while the other half in flight keeps the provider busy meanwhile.
 */
export function minimumClaim(dispatchClass: DispatchClass, batchSize: number): number {
  return dispatchClass === 'transactional' ? 1 : Math.ceil(batchSize / 2);
}

export interface WaitingWorkspace {
  workspaceId: string;
  weight: number;
}

/**
 * Weighted round robin: splits `capacity` slots between the workspaces that have messages waiting, in
 * proportion to their weights, each getting at least one. A workspace with fewer waiting messages than
 * its share simply leaves the rest to the next round. Order of the result follows the input.
 */
export function fairShares(capacity: number, workspaces: readonly WaitingWorkspace[]): number[] {
  if (capacity <= 0 || workspaces.length === 0) return workspaces.map(() => 0);
  const total = workspaces.reduce((sum, workspace) => sum + workspace.weight, 0);
  return workspaces.map((workspace) => Math.max(1, Math.ceil((capacity * workspace.weight) / total)));
}

/**
 * Transactional messages of a workspace under a backlog travel in batch workflows of at most this many.
 * Each batch carries its messages' ids in the `MessageIds` search attribute, and Temporal refuses a search
 * attribute value over 2 KB (frontend.searchAttributesSizeOfValueLimit's default): 50 ids of
 * 36 characters, quoted, are 1,951 bytes of JSON.
 */
export const TRANSACTIONAL_BATCH_SIZE = 50;

/**
 * A backlogged workspace's transactional messages wait for this much of a batch before they start (unless
 * they waited `BATCH_DEFERRAL_MS` already): as the provider frees a few slots per round, starting at once
 * would make a batch workflow of every few messages, and Temporal's cost per workflow (not per message) is
 * what held transactional bursts at 14–18/s (issue 33). Half a batch, or half the bound when that is smaller.
 */
export function transactionalBatchMinimum(bound: number): number {
  return Math.max(1, Math.ceil(Math.min(TRANSACTIONAL_BATCH_SIZE, bound) / 2));
}

/** The longest a backlogged workspace's claimed messages are put back to gather into a bigger batch. */
export const BATCH_DEFERRAL_MS = 250;

/**
 * Forgets the gathering start of workspaces that stopped gathering without a batch (their backlog emptied, or
 * their messages went out one by one): an entry older than two windows can belong to no gathering still under
 * way (one that reaches its window is sent, and its entry dropped), and left in place it would cut the next
 * gathering of that workspace short and keep one entry per workspace ever seen for the life of the worker.
 */
export function forgetStaleGathering(gathering: Map<string, number>, now: number): void {
  for (const [key, since] of gathering) if (now - since >= 2 * BATCH_DEFERRAL_MS) gathering.delete(key);
}

/** How a round's transactional messages go: each in its own workflow, in batches, or back to the outbox for now. */
export interface TransactionalPlan {
  single: DispatchedMessage[];
  batches: DispatchedMessage[][];
  deferred: DispatchedMessage[];
}

/**
 * Adaptive batching (docs/delivery.md): a workspace whose transactional outbox is shallow keeps one
 * `send:<id>` workflow per message (the lowest latency); one with a backlog (`backlogged`: at least
 * SEND_BATCH_THRESHOLD waiting) sends this round's messages in batch workflows of at most
 * TRANSACTIONAL_BATCH_SIZE, or defers them when there are fewer than `minimum` and `mayDefer` allows it.
 * Which messages a round claimed, and so fairness between workspaces, is decided before this.
 */
export function planTransactional(
  messages: readonly DispatchedMessage[],
  backlogged: ReadonlySet<string>,
  minimum: number,
  mayDefer: (workspaceId: string) => boolean,
): TransactionalPlan {
  const plan: TransactionalPlan = { single: [], batches: [], deferred: [] };
  const groups = new Map<string, DispatchedMessage[]>();
  for (const message of messages) {
    if (!backlogged.has(message.workspaceId)) plan.single.push(message);
    else groups.set(message.workspaceId, [...(groups.get(message.workspaceId) ?? []), message]);
  }
  for (const [workspaceId, group] of groups) {
    if (group.length < minimum && mayDefer(workspaceId)) plan.deferred.push(...group);
    else plan.batches.push(...chunksOf(group, TRANSACTIONAL_BATCH_SIZE));
  }
  return plan;
}

export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}
