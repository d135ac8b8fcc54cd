import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { type DispatchClass, type DispatchedMessage, fairShares, type MessageKind } from '../../core/dispatch';
import { PLANS, isPlanName } from '../../core/plans';

/** Rows of one channel handed to Temporal (or being handed) and not finished, per dispatch class. */
export async function countInFlight(db: Sequelize, channel: string, transaction?: Transaction): Promise<Record<DispatchClass, number>> {
  const rows = await db.query<{ transactional: string; bulk: string }>(
    `SELECT count(*) FILTER (WHERE priority = 1) AS transactional, count(*) FILTER (WHERE priority > 1) AS bulk
     FROM messages
     WHERE channel = $1 AND status IN ('queued', 'sending') AND (dispatched_at IS NOT NULL OR dispatch_lease_until IS NOT NULL)
       -- An expired lease is a dispatcher that died or a start that failed: free again, not in flight.
       AND (dispatched_at IS NOT NULL OR dispatch_lease_until > now())`,
    { bind: [channel], type: QueryTypes.SELECT, transaction },
  );
  return { transactional: Number(rows[0].transactional), bulk: Number(rows[0].bulk) };
}

/**
 * Of these channels, the ones with anything in the outbox: one probe of messages_outbox_fair_idx each (the
 * channel leads it). A superset of what a round can claim (scheduled messages and leased ones count too), so a
 * channel left out has nothing to claim, and an idle round costs this one statement instead of a transaction
 * per channel and class.
 */
export async function channelsWithWaiting(db: Sequelize, channels: readonly string[]): Promise<Set<string>> {
  const rows = await db.query<{ channel: string }>(
    `SELECT c.channel FROM unnest($1::text[]) AS c (channel)
     WHERE EXISTS (SELECT 1 FROM messages m WHERE m.channel = c.channel AND m.dispatched_at IS NULL AND m.status = 'queued')`,
    { bind: [channels], type: QueryTypes.SELECT },
  );
  return new Set(rows.map((row) => row.channel));
}

/**
 * The workspaces with undispatched messages of this class on the channel, each found with one index probe
 * (a loose index scan over messages_outbox_fair_idx), so a backlog of millions costs one probe per
 * workspace rather than a scan.
 */
async function waitingWorkspaces(db: Sequelize, channel: string, priorities: readonly number[], transaction: Transaction): Promise<Array<{ workspaceId: string; weight: number }>> {
  const rows = await db.query<{ workspace_id: string; plan: string }>(
    `WITH RECURSIVE waiting AS (
       (SELECT workspace_id FROM messages WHERE channel = $1 AND dispatched_at IS NULL AND status = 'queued' AND priority = ANY($2::smallint[])
        ORDER BY workspace_id LIMIT 1)
       UNION ALL
       SELECT (SELECT m.workspace_id FROM messages m
               WHERE m.channel = $1 AND m.dispatched_at IS NULL AND m.status = 'queued' AND m.priority = ANY($2::smallint[]) AND m.workspace_id > waiting.workspace_id
               ORDER BY m.workspace_id LIMIT 1)
       FROM waiting WHERE waiting.workspace_id IS NOT NULL
     )
     SELECT waiting.workspace_id, w.plan FROM waiting JOIN workspaces w ON w.id = waiting.workspace_id`,
    { bind: [channel, priorities], type: QueryTypes.SELECT, transaction },
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, weight: isPlanName(row.plan) ? PLANS[row.plan].dispatchWeight : 1 }));
}

const PRIORITIES: Record<DispatchClass, number[]> = { transactional: [1], bulk: [2, 3] };

/**
 * Takes up to `capacity` messages of one class from the outbox, fairly: each waiting workspace gets a share
 * of the slots in proportion to its weight (weighted round robin), its own most urgent and oldest first;
 * across workspaces the most urgent kind goes first. The rows are leased, not locked: the lease makes them
 * count as in flight and keeps other dispatchers off them while their workflows start, and frees them if
 * this dispatcher dies. One dispatcher per channel and class at a time (an advisory lock), so the bound is
 * never passed by two counting at once; others skip the round. With `minimum`, a round takes nothing until
 * that much room is free (bulk: a batch's worth, so a slow provider does not get batches of one).
 */
export async function claimFairly(
  db: Sequelize,
  options: {
    channel: string; dispatchClass: DispatchClass; bound: number; leaseMs: number; minimum?: number;
    /** Take exactly this many whatever is in flight (a breaker's probe). */
    capacity?: number;
    /** Workspaces whose provider route is open: their messages stay in the outbox. */
    skipWorkspaces?: readonly string[];
    /** Only these workspaces (the probe of a workspace's route). */
    onlyWorkspaces?: readonly string[];
  },
): Promise<DispatchedMessage[]> {
  return db.transaction(async (transaction) => {
    const [lock] = await db.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', {
      bind: [`dispatch:${options.channel}:${options.dispatchClass}`],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!lock.locked) return [];
    const inFlight = options.capacity === undefined ? await countInFlight(db, options.channel, transaction) : null;
    const capacity = inFlight ? options.bound - inFlight[options.dispatchClass] : (options.capacity ?? 0);
    if (capacity <= 0 || (inFlight && capacity < (options.minimum ?? 1))) return [];
    const skip = new Set(options.skipWorkspaces ?? []);
    const only = options.onlyWorkspaces && new Set(options.onlyWorkspaces);
    const workspaces = (await waitingWorkspaces(db, options.channel, PRIORITIES[options.dispatchClass], transaction))
      .filter((workspace) => !skip.has(workspace.workspaceId) && (!only || only.has(workspace.workspaceId)));
    if (workspaces.length === 0) return [];
    const claimed: ClaimedRow[] = [];
    // Water-filling: a workspace with less waiting than its share leaves the rest to the others, shared
    // again by weight among those that filled theirs, until the round is full or everyone is drained.
    for (let left = capacity, takers = workspaces; left > 0 && takers.length > 0; ) {
      const shares = fairShares(left, takers);
      const rows = await leaseShares(db, transaction, options, takers, shares, left);
      claimed.push(...rows);
      left -= rows.length;
      const taken = new Map<string, number>();
      for (const row of rows) taken.set(row.workspace_id, (taken.get(row.workspace_id) ?? 0) + 1);
      takers = takers.filter((workspace, i) => (taken.get(workspace.workspaceId) ?? 0) >= shares[i]);
      if (rows.length === 0) break;
    }
    return claimed.map((row) => ({
      messageId: row.id,
      workspaceId: row.workspace_id,
      kind: row.kind,
      channel: row.channel,
      contactId: row.contact_id,
      campaignId: row.campaign_id,
      enrollmentId: row.enrollment_id,
      round: row.redispatches,
      traceparent: row.traceparent,
    }));
  });
}

type ClaimedRow = {
  id: string; workspace_id: string; kind: MessageKind; channel: string; contact_id: string | null; campaign_id: string | null; enrollment_id: string | null;
  redispatches: number; traceparent: string | null;
};

/**
 * Where a workspace's turns start in this round: an exponential draw with its weight as rate. Its later
 * turns follow every 1/weight (stride scheduling), so within a round workspaces interleave by weight; the
 * random start makes the first turn go to each workspace with a probability proportional to its weight
 * (an exponential race), so when only one slot frees at a time, as under a steady backlog, a light
 * workspace still gets its share instead of always losing to the heaviest one. No state between rounds.
 */
function strideStart(weight: number): number {
  return -Math.log(1 - Math.random()) / weight;
}

/**
 * Leases each workspace's next `share` messages (its most urgent and oldest), at most `limit` in all, the
 * most urgent kind first across workspaces and, within a kind, interleaved by weight.
 */
async function leaseShares(
  db: Sequelize,
  transaction: Transaction,
  options: { channel: string; dispatchClass: DispatchClass; leaseMs: number },
  workspaces: ReadonlyArray<{ workspaceId: string; weight: number }>,
  shares: readonly number[],
  limit: number,
): Promise<ClaimedRow[]> {
  return db.query<ClaimedRow>(
    `UPDATE messages m SET dispatch_lease_until = now() + make_interval(secs => $6::double precision / 1000)
     FROM (
       SELECT picked.id FROM unnest($2::uuid[], $3::int[], $4::float8[], $8::float8[]) AS w (workspace_id, share, weight, phase)
       CROSS JOIN LATERAL (
         SELECT id, priority, row_number() OVER (ORDER BY priority, created_at) AS rank FROM (
           SELECT id, priority, created_at FROM messages
           WHERE channel = $1 AND workspace_id = w.workspace_id AND dispatched_at IS NULL AND status = 'queued' AND priority = ANY($7::smallint[])
             AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())
             -- A message handed back after a transient failure waits out its backoff here, holding no slot.
             AND (next_attempt_at IS NULL OR next_attempt_at <= now())
           ORDER BY priority, created_at LIMIT w.share
         ) next
       ) picked
       ORDER BY picked.priority, w.phase + (picked.rank - 1) / w.weight
       LIMIT $5
     ) chosen
     WHERE m.id = chosen.id
     RETURNING m.id, m.workspace_id, m.kind, m.channel, m.contact_id, m.campaign_id, m.enrollment_id, m.redispatches, m.traceparent`,
    {
      bind: [
        options.channel, workspaces.map((w) => w.workspaceId), shares, workspaces.map((w) => w.weight), limit, options.leaseMs,
        PRIORITIES[options.dispatchClass], workspaces.map((w) => strideStart(w.weight)),
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
}

/**
 * Of these workspaces, those with at least `threshold` transactional messages of the channel waiting for
 * their workflow (leased by the round in progress included): the backlogged ones, whose messages travel in
 * batch workflows (core/dispatch.ts planTransactional). Each is counted up to the threshold only, through
 * messages_outbox_fair_idx, so a backlog of millions costs the same as one of `threshold`.
 */
export async function backloggedWorkspaces(db: Sequelize, channel: string, workspaceIds: readonly string[], threshold: number): Promise<Set<string>> {
  if (workspaceIds.length === 0 || threshold <= 0) return new Set();
  const rows = await db.query<{ workspace_id: string }>(
    `SELECT w.workspace_id FROM unnest($2::uuid[]) AS w (workspace_id)
     WHERE (SELECT count(*) FROM (
       SELECT 1 FROM messages
       WHERE channel = $1 AND workspace_id = w.workspace_id AND dispatched_at IS NULL AND status = 'queued' AND priority = 1
       LIMIT $3
     ) waiting) >= $3`,
    { bind: [channel, [...new Set(workspaceIds)], threshold], type: QueryTypes.SELECT },
  );
  return new Set(rows.map((row) => row.workspace_id));
}

/** Gives rows this round leased back to the outbox at once (a backlogged workspace's few, gathering for a batch). */
export async function releaseDispatchLease(db: Sequelize, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.query('UPDATE messages SET dispatch_lease_until = NULL WHERE id = ANY ($1::uuid[]) AND dispatched_at IS NULL', { bind: [messageIds] });
}

/**
 * Marks messages whose workflow now runs (or already ran), naming it for the reconciler. Only a row still in
 * the round it was started in (`round`: its redispatches then) moves: an attempt that failed fast may already
 * have handed it back to the outbox, and marking it would leave it dispatched to a workflow that ended.
 */
export async function markDispatched(db: Sequelize, started: ReadonlyArray<{ messageId: string; workflowId: string; round: number }>): Promise<void> {
  if (started.length === 0) return;
  await db.query(
    `UPDATE messages m SET dispatched_at = now(), dispatch_lease_until = NULL, workflow_id = s.workflow_id
     FROM unnest($1::uuid[], $2::text[], $3::int[]) AS s (id, workflow_id, round)
     WHERE m.id = s.id AND m.dispatched_at IS NULL AND m.redispatches = s.round`,
    { bind: [started.map((s) => s.messageId), started.map((s) => s.workflowId), started.map((s) => s.round)] },
  );
}

/**
 * Extends the lease of rows a live round is still starting, so the lease can be short (a dead round's rows
 * free within seconds) without a slow round losing its rows to another dispatcher midway.
 */
export async function renewDispatchLease(db: Sequelize, messageIds: readonly string[], leaseMs: number): Promise<void> {
  if (messageIds.length === 0) return;
  await db.query(
    `UPDATE messages SET dispatch_lease_until = now() + make_interval(secs => $2::double precision / 1000)
     WHERE id = ANY ($1::uuid[]) AND dispatched_at IS NULL AND dispatch_lease_until IS NOT NULL`,
    { bind: [messageIds, leaseMs] },
  );
}

/**
 * How long a message handed back waits: `none` (its route is down: due again as soon as the dispatcher takes
 * the route again), `backoff` (a per-message transient failure: counts a retry and waits its backoff,
 * core/breaker.ts RetrySettings), or a number of milliseconds the provider named.
 */
export type HandBackWait = 'none' | 'backoff' | number;

/**
 * Hands messages back to the outbox after a failed or skipped provider call: queued, not dispatched, no
 * lease and no claim, so they hold no in-flight slot and no Temporal timer while they wait. Only messages
 * still waiting and not held by a live attempt move; each counts a redispatch, which names its next
 * workflow. Returns the ids handed back.
 */
export async function handBackToOutbox(
  db: Sequelize,
  workspaceId: string,
  items: ReadonlyArray<{ messageId: string; wait: HandBackWait }>,
  backoff: { initialMs: number; maximumMs: number },
): Promise<string[]> {
  if (items.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `WITH back AS (SELECT * FROM unnest($2::uuid[], $3::text[], $4::float8[]) AS h (id, wait, delay_ms)),
     held AS (
       SELECT m.id FROM messages m WHERE m.workspace_id = $1 AND m.id IN (SELECT id FROM back) ORDER BY m.id FOR UPDATE
     )
     UPDATE messages m SET status = 'queued', dispatched_at = NULL, dispatch_lease_until = NULL,
       delivery_claim = NULL, delivery_claimed_until = NULL, redispatches = m.redispatches + 1,
       send_retries = m.send_retries + CASE WHEN b.wait = 'backoff' THEN 1 ELSE 0 END,
       next_attempt_at = CASE b.wait
         WHEN 'backoff' THEN now() + make_interval(secs =>
           least($6::double precision, $5::double precision * power(2, least(m.send_retries, 30))) * (0.8 + 0.4 * random()) / 1000)
         WHEN 'delay' THEN now() + make_interval(secs => b.delay_ms / 1000)
       END,
       updated_at = now()
     FROM held JOIN back b ON b.id = held.id
     WHERE m.id = held.id AND m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL
       AND (m.delivery_claim IS NULL OR m.delivery_claimed_until < now())
     RETURNING m.id`,
    {
      bind: [
        workspaceId,
        items.map((item) => item.messageId),
        items.map((item) => (typeof item.wait === 'number' ? 'delay' : item.wait)),
        items.map((item) => (typeof item.wait === 'number' ? item.wait : 0)),
        backoff.initialMs,
        backoff.maximumMs,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows.map((row) => row.id);
}

/**
 * Messages of a channel (of one workspace, for a chat route) still waiting in the outbox past the retry
 * deadline, at most `limit`: while a route stays open nothing attempts them, so the dispatcher ends them
 * (a provider down for a week does not keep messages forever).
 */
export async function findExpiredWaiting(
  db: Sequelize,
  channel: string,
  workspaceId: string | null,
  deadlineMs: number,
  limit: number,
): Promise<Array<{ workspaceId: string; messageId: string }>> {
  const rows = await db.query<{ id: string; workspace_id: string }>(
    `SELECT id, workspace_id FROM messages
     WHERE channel = $1 AND ($2::uuid IS NULL OR workspace_id = $2) AND dispatched_at IS NULL AND status = 'queued'
       AND created_at < now() - make_interval(secs => $3::double precision / 1000)
     LIMIT $4`,
    { bind: [channel, workspaceId, deadlineMs, limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, messageId: row.id }));
}
