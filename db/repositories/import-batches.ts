import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Channel, Consent } from '../../core/identities';
import { planBatch, type BatchPlan } from '../../core/imports/batch-plan';
import type { ImportRow, RowError } from '../../core/imports/rows';

export interface ImportBatch {
  rows: ImportRow[];
  /** Rows that failed before reaching the database (unreadable cells, wrong column count). */
  errors: RowError[];
  /** Byte offset where the batch starts: the job's checkpoint must still be there. */
  from: number;
  /** Byte offset and line just past the batch's last record: where the next batch starts. */
  offset: number;
  line: number;
  /** The file ends with this batch: the job completes in the same transaction. */
  last: boolean;
  consent: Consent;
}

/**
 * `stopped`: the job is no longer importing (canceled). `stale`: its checkpoint is no longer where this batch
 * starts, because another attempt of the slice (a retry after a heartbeat timeout, while this one still ran)
 * wrote it first; this attempt must stop and let a new slice read the checkpoint.
 */
export type BatchResult = { state: 'committed'; created: number; updated: number; failed: number } | { state: 'stopped' } | { state: 'stale' };

/** Kept on the job: the first errors in file order. */
export const KEPT_ERRORS = 100;

/** A concurrent writer took one of the batch's new addresses (or erased a contact) after it was looked up. */
class BatchRaced extends Error {}
const RACE_CODES = new Set(['23505', '23503', '40P01']);
const MAX_ATTEMPTS = 4;

function isRace(error: unknown): boolean {
  if (error instanceof BatchRaced) return true;
  const code = (error as { parent?: { code?: unknown } } | null)?.parent?.code;
  return typeof code === 'string' && RACE_CODES.has(code);
}

/**
 * Writes one batch of an import and moves the job's counters and checkpoint in the same transaction, so a
 * batch is in exactly once: a crash before the commit redoes it, after the commit resumes past it. The job
 * row is locked first and must still be `importing` (a canceled job writes nothing more) with its checkpoint
 * where the batch starts (two attempts of a slice can never both write a batch). Every
 * write is one set-based statement over the whole batch. A race with a concurrent upsert of the same address
 * rolls the batch back and redoes it, which then finds the winner as the owner.
 */
export async function commitImportBatch(db: Sequelize, workspaceId: string, importId: string, batch: ImportBatch): Promise<BatchResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction((transaction) => writeBatch(db, workspaceId, importId, batch, transaction));
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isRace(error)) throw error;
    }
  }
}

async function writeBatch(db: Sequelize, workspaceId: string, importId: string, batch: ImportBatch, transaction: Transaction): Promise<BatchResult> {
  // A commit lost to a database crash loses the batch's rows and the job's checkpoint together, so the import
  // redoes it: nothing needs the commit to wait for its WAL flush.
  await db.query('SET LOCAL synchronous_commit = off', { transaction });
  const query = <T extends object>(sql: string, bind: unknown[]) => db.query<T>(sql, { bind, type: QueryTypes.SELECT, transaction });
  const [job] = await query<{ kept: number; phase: string; checkpoint: string }>(
    `SELECT jsonb_array_length(errors) AS kept, phase, checkpoint_offset AS checkpoint FROM import_jobs
     WHERE workspace_id = $1 AND id = $2 FOR UPDATE`,
    [workspaceId, importId],
  );
  if (!job || job.phase !== 'importing') return { state: 'stopped' };
  if (Number(job.checkpoint) !== batch.from) return { state: 'stale' };

  const identities = batch.rows.flatMap((row) => row.identities);
  const channels = identities.map((identity) => identity.channel);
  const addresses = identities.map((identity) => identity.address);
  const owners = await query<{ channel: Channel; address: string; contact_id: string }>(
    `SELECT i.channel, i.address, i.contact_id FROM contact_identities i
     JOIN unnest($2::text[], $3::text[]) AS wanted (channel, address) ON i.channel = wanted.channel AND i.address = wanted.address
     WHERE i.workspace_id = $1`,
    [workspaceId, channels, addresses],
  );
  const erased = await query<{ channel: Channel; address: string }>(
    `SELECT s.channel, s.address FROM suppressions s
     JOIN unnest($2::text[], $3::text[]) AS wanted (channel, address) ON s.channel = wanted.channel AND s.address = wanted.address
     WHERE s.workspace_id = $1 AND s.reason = 'erased'`,
    [workspaceId, channels, addresses],
  );
  const plan = planBatch(batch.rows, {
    owners: new Map(owners.map((owner) => [`${owner.channel} ${owner.address}`, owner.contact_id])),
    erased: new Set(erased.map((row) => `${row.channel} ${row.address}`)),
    consent: batch.consent,
    newId: randomUUID,
  });
  await writePlan(db, workspaceId, plan, transaction);

  const errors = [...batch.errors, ...plan.errors].sort((a, b) => a.line - b.line);
  const failed = errors.length;
  await db.query(
    `UPDATE import_jobs SET
       processed = processed + $3, created = created + $4, updated = updated + $5, failed = failed + $6,
       errors = errors || $7::jsonb, checkpoint_offset = $8, checkpoint_line = $9,
       phase = CASE WHEN $10 THEN 'completed' ELSE phase END,
       finished_at = CASE WHEN $10 THEN now() ELSE finished_at END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    {
      bind: [
        workspaceId,
        importId,
        batch.rows.length + batch.errors.length,
        plan.created,
        plan.updated,
        failed,
        JSON.stringify(errors.slice(0, Math.max(0, KEPT_ERRORS - job.kept))),
        batch.offset,
        batch.line,
        batch.last,
      ],
      transaction,
    },
  );
  return { state: 'committed', created: plan.created, updated: plan.updated, failed };
}

async function writePlan(db: Sequelize, workspaceId: string, plan: BatchPlan, transaction: Transaction): Promise<void> {
  const run = (sql: string, bind: unknown[]) => db.query(sql, { bind, transaction });
  if (plan.newContacts.length) {
    await run(
      `INSERT INTO contacts (id, workspace_id, attributes)
       SELECT id, $1, attributes::jsonb FROM unnest($2::uuid[], $3::text[]) AS fresh (id, attributes)`,
      [workspaceId, plan.newContacts.map((contact) => contact.id), plan.newContacts.map((contact) => JSON.stringify(contact.attributes))],
    );
  }
  if (plan.attributeMerges.length) {
    await run(
      `UPDATE contacts c SET attributes = c.attributes || merged.attributes::jsonb, updated_at = now()
       FROM unnest($2::uuid[], $3::text[]) AS merged (id, attributes)
       WHERE c.workspace_id = $1 AND c.id = merged.id`,
      [workspaceId, plan.attributeMerges.map((merge) => merge.id), plan.attributeMerges.map((merge) => JSON.stringify(merge.attributes))],
    );
  }
  if (plan.identities.length) {
    const fresh = new Set(plan.newContacts.map((contact) => contact.id));
    // A primary only where the contact has none on the channel yet (a contact created by this batch has none,
    // so only existing ones are looked at); the plan offers at most one per contact and channel, so the
    // statement cannot give a contact two.
    const [inserted] = await db.query<{ n: string }>(
      `WITH added AS (
         INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, is_primary)
         SELECT $1, cand.channel, cand.address, cand.contact_id, cand.consent,
                cand.candidate AND (cand.fresh OR NOT EXISTS (
                  SELECT 1 FROM contact_identities p WHERE p.contact_id = cand.contact_id AND p.channel = cand.channel AND p.is_primary))
         FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[], $6::boolean[], $7::boolean[]) AS cand (channel, address, contact_id, consent, candidate, fresh)
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*) AS n FROM added`,
      {
        bind: [
          workspaceId,
          plan.identities.map((identity) => identity.channel),
          plan.identities.map((identity) => identity.address),
          plan.identities.map((identity) => identity.contactId),
          plan.identities.map((identity) => identity.consent),
          plan.identities.map((identity) => identity.primary),
          plan.identities.map((identity) => fresh.has(identity.contactId)),
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (Number(inserted.n) < plan.identities.length) throw new BatchRaced();
  }
  if (plan.unsubscribed.length) {
    const bind = [workspaceId, plan.unsubscribed.map((identity) => identity.channel), plan.unsubscribed.map((identity) => identity.address)];
    await run(
      `UPDATE contact_identities i SET consent = 'opted_out', updated_at = now()
       FROM unnest($2::text[], $3::text[]) AS gone (channel, address)
       WHERE i.workspace_id = $1 AND i.channel = gone.channel AND i.address = gone.address AND i.consent <> 'opted_out'`,
      bind,
    );
    await run(
      `INSERT INTO suppressions (workspace_id, channel, address, reason)
       SELECT $1, channel, address, 'unsubscribed' FROM unnest($2::text[], $3::text[]) AS gone (channel, address)
       ON CONFLICT DO NOTHING`,
      bind,
    );
  }
  await addMemberships(db, workspaceId, { names: 'tags', members: 'contact_tags', key: 'tag_id' }, plan.tags, transaction);
  await addMemberships(db, workspaceId, { names: 'lists', members: 'list_members', key: 'list_id' }, plan.lists, transaction);
}

/** Tags or lists by name (created where missing, names case-insensitive), then the memberships. */
async function addMemberships(
  db: Sequelize,
  workspaceId: string,
  tables: { names: 'tags' | 'lists'; members: 'contact_tags' | 'list_members'; key: 'tag_id' | 'list_id' },
  pairs: ReadonlyArray<{ contactId: string; name: string }>,
  transaction: Transaction,
): Promise<void> {
  if (pairs.length === 0) return;
  const firstSpelling = new Map<string, string>();
  for (const { name } of pairs) if (!firstSpelling.has(name.toLowerCase())) firstSpelling.set(name.toLowerCase(), name);
  // Sorted, so two imports creating the same names lock them in the same order.
  const names = [...firstSpelling.keys()].sort().map((lower) => firstSpelling.get(lower) as string);
  await db.query(
    `INSERT INTO ${tables.names} (id, workspace_id, name)
     SELECT gen_random_uuid(), $1, name FROM unnest($2::text[]) AS wanted (name)
     ON CONFLICT (workspace_id, lower(name)) DO NOTHING`,
    { bind: [workspaceId, names], transaction },
  );
  await db.query(
    `INSERT INTO ${tables.members} (workspace_id, ${tables.key}, contact_id)
     SELECT $1, named.id, pair.contact_id
     FROM unnest($2::uuid[], $3::text[]) AS pair (contact_id, name)
     JOIN ${tables.names} named ON named.workspace_id = $1 AND lower(named.name) = lower(pair.name)
     ORDER BY named.id
     ON CONFLICT DO NOTHING`,
    { bind: [workspaceId, pairs.map((pair) => pair.contactId), pairs.map((pair) => pair.name)], transaction },
  );
}
