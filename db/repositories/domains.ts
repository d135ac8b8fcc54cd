import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import type { RecordCheck } from '../../core/domain-checks';
import type { DomainStatus } from '../../core/domain-status';

export interface DomainRecord {
  id: string;
  workspaceId: string;
  name: string;
  status: DomainStatus;
  region: string;
  dkimSelector: string;
  dkimPublicKey: string;
  inboundEnabled: boolean;
  defaultFromName: string | null;
  defaultFromAddress: string | null;
  detail: string | null;
  recordChecks: RecordCheck[];
  lastCheckedAt: Date | null;
  verifiedAt: Date | null;
  createdAt: Date;
}

interface DomainRow {
  id: string;
  workspace_id: string;
  name: string;
  status: DomainStatus;
  region: string;
  dkim_selector: string;
  dkim_public_key: string;
  inbound_enabled: boolean;
  default_from_name: string | null;
  default_from_address: string | null;
  detail: string | null;
  record_checks: RecordCheck[];
  last_checked_at: Date | null;
  verified_at: Date | null;
  created_at: Date;
}

/** Every column but the sealed private key, which only the signing lookup reads. */
const COLUMNS = `id, workspace_id, name, status, region, dkim_selector, dkim_public_key, inbound_enabled,
  default_from_name, default_from_address, detail, record_checks, last_checked_at, verified_at, created_at`;

const toRecord = (row: DomainRow): DomainRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  status: row.status,
  region: row.region,
  dkimSelector: row.dkim_selector,
  dkimPublicKey: row.dkim_public_key,
  inboundEnabled: row.inbound_enabled,
  defaultFromName: row.default_from_name,
  defaultFromAddress: row.default_from_address,
  detail: row.detail,
  recordChecks: row.record_checks,
  lastCheckedAt: row.last_checked_at,
  verifiedAt: row.verified_at,
  createdAt: row.created_at,
});

export interface NewDomain {
  name: string;
  region: string;
  defaultFromName: string | null;
  dkimSelector: string;
  dkimPublicKey: string;
  dkimPrivateKeySealed: string;
}

/**
 * Why a name cannot be added: this workspace already holds it (with the domain's id), or another workspace
 * has verified it (nothing more is told). Another workspace's pending or failed claim does not stop it.
 */
export type DomainClaim = { created: DomainRecord } | { takenBy: 'this-workspace'; id: string } | { takenBy: 'another-workspace' };

/**
 * Inserts the domain unless this workspace already holds the name or another workspace has verified it.
 * Pending claims of several workspaces may coexist; the first to verify wins (saveDomainCheck). The unique
 * index of (workspace, name) settles a workspace racing itself.
 */
export async function insertDomain(db: Sequelize, workspaceId: string, domain: NewDomain): Promise<DomainClaim> {
  const rows = await db.query<DomainRow>(
    `INSERT INTO domains (id, workspace_id, name, region, default_from_name, dkim_selector, dkim_public_key, dkim_private_key_sealed)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8
     WHERE NOT EXISTS (SELECT 1 FROM domains WHERE name = $3 AND status = 'verified' AND workspace_id <> $2)
     ON CONFLICT (workspace_id, name) DO NOTHING
     RETURNING ${COLUMNS}`,
    {
      bind: [randomUUID(), workspaceId, domain.name, domain.region, domain.defaultFromName, domain.dkimSelector, domain.dkimPublicKey, domain.dkimPrivateKeySealed],
      type: QueryTypes.SELECT,
    },
  );
  if (rows[0]) return { created: toRecord(rows[0]) };
  const own = await findDomainByName(db, workspaceId, domain.name);
  return own ? { takenBy: 'this-workspace', id: own.id } : { takenBy: 'another-workspace' };
}

/** Newest first (decisions: every list is ordered newest first). */
export async function listDomains(db: Sequelize, workspaceId: string): Promise<DomainRecord[]> {
  const rows = await db.query<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE workspace_id = $1 ORDER BY created_at DESC, id`, {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toRecord);
}

/** With a transaction, the row is locked until it ends, so concurrent checks apply their verdicts one at a time. */
export async function findDomain(db: Sequelize, workspaceId: string, domainId: string, transaction?: Transaction): Promise<DomainRecord | null> {
  const rows = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM domains WHERE workspace_id = $1 AND id = $2${transaction ? ' FOR UPDATE' : ''}`,
    { bind: [workspaceId, domainId], type: QueryTypes.SELECT, transaction },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The workspace's domain of that exact (normalised) name: what a send's from address is checked against. */
export async function findDomainByName(db: Sequelize, workspaceId: string, name: string): Promise<DomainRecord | null> {
  const rows = await db.query<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE workspace_id = $1 AND name = $2`, {
    bind: [workspaceId, name],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * The domain of that name in any workspace: the verified one, or else the oldest claim (several workspaces
 * may claim a name until one verifies it). Only the local DNS server asks, to publish one set of records.
 */
export async function findDomainAnywhere(db: Sequelize, name: string): Promise<DomainRecord | null> {
  const rows = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM domains WHERE name = $1 ORDER BY status = 'verified' DESC, created_at, id LIMIT 1`,
    { bind: [name], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Whether a workspace other than this one has verified the name (it then keeps it: first to verify wins). */
export async function isVerifiedElsewhere(db: Sequelize, workspaceId: string, name: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM domains WHERE name = $1 AND status = \'verified\' AND workspace_id <> $2', {
    bind: [name, workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/**
 * The SES region a message is sent from: the region of its workspace's domain of that name (the from
 * address's domain). The message id names the workspace, since the channel is given only the email.
 */
export async function findSendingRegion(db: Sequelize, messageId: string, domainName: string): Promise<string | null> {
  const rows = await db.query<{ region: string }>(
    'SELECT d.region FROM messages m JOIN domains d ON d.workspace_id = m.workspace_id AND d.name = $2 WHERE m.id = $1',
    { bind: [messageId, domainName], type: QueryTypes.SELECT },
  );
  return rows[0]?.region ?? null;
}

/** Sets the default sender fields that are given (undefined leaves a field as it is; null clears it). */
export async function updateDomainDefaults(
  db: Sequelize,
  workspaceId: string,
  domainId: string,
  changes: { defaultFromName?: string | null; defaultFromAddress?: string | null },
): Promise<DomainRecord | null> {
  const rows = await db.query<DomainRow>(
    `UPDATE domains SET
       default_from_name = CASE WHEN $3 THEN $4 ELSE default_from_name END,
       default_from_address = CASE WHEN $5 THEN $6 ELSE default_from_address END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2
     RETURNING ${COLUMNS}`,
    {
      bind: [
        workspaceId,
        domainId,
        changes.defaultFromName !== undefined,
        changes.defaultFromName ?? null,
        changes.defaultFromAddress !== undefined,
        changes.defaultFromAddress ?? null,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function setInboundEnabled(db: Sequelize, workspaceId: string, domainId: string, enabled: boolean): Promise<DomainRecord | null> {
  const rows = await db.query<DomainRow>(
    `UPDATE domains SET inbound_enabled = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    { bind: [workspaceId, domainId, enabled], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export interface CheckResult {
  status: DomainStatus;
  detail: string | null;
  recordChecks: RecordCheck[];
}

/** The verdict was stored; or it was `verified` and another workspace's domain of that name already is. */
export type SavedCheck = { saved: DomainRecord | null } | { verifiedElsewhere: true };

/**
 * Stores a check's verdict; `verified_at` keeps the first time the domain passed since it last failed.
 * A second verified domain of one name breaks the partial unique index: that race (two workspaces' checks
 * passing at once) ends here, in the database, as `verifiedElsewhere`. Inside a transaction the update runs
 * in a savepoint, so the caller's transaction survives the refusal and can store the other verdict.
 */
export async function saveDomainCheck(
  db: Sequelize,
  workspaceId: string,
  domainId: string,
  result: CheckResult,
  transaction?: Transaction,
): Promise<SavedCheck> {
  const update = (savepoint: Transaction | undefined) =>
    db.query<DomainRow>(
      `UPDATE domains SET
         status = $3,
         detail = $4,
         record_checks = $5,
         last_checked_at = now(),
         verified_at = CASE WHEN $3 = 'verified' THEN COALESCE(verified_at, now()) ELSE NULL END,
         updated_at = now()
       WHERE workspace_id = $1 AND id = $2
       RETURNING ${COLUMNS}`,
      { bind: [workspaceId, domainId, result.status, result.detail, JSON.stringify(result.recordChecks)], type: QueryTypes.SELECT, transaction: savepoint },
    );
  try {
    const rows = await (transaction ? db.transaction({ transaction }, update) : update(undefined));
    return { saved: rows[0] ? toRecord(rows[0]) : null };
  } catch (error) {
    if (error instanceof UniqueConstraintError && (error.parent as { constraint?: string }).constraint === 'domains_verified_name_key') {
      return { verifiedElsewhere: true };
    }
    throw error;
  }
}

export interface SigningKeyRecord {
  domainName: string;
  selector: string;
  privateKeySealed: string;
}

/**
 * The DKIM key of the workspace's domain of that name, still sealed. `verifiedOnly` is the send path's
 * question: a domain that is pending, failed or another workspace's gives no key, so nothing signs for it.
 */
export async function findSigningKey(
  db: Sequelize,
  workspaceId: string,
  domainName: string,
  options: { verifiedOnly?: boolean } = {},
): Promise<SigningKeyRecord | null> {
  const rows = await db.query<{ name: string; dkim_selector: string; dkim_private_key_sealed: string }>(
    `SELECT name, dkim_selector, dkim_private_key_sealed FROM domains
     WHERE workspace_id = $1 AND name = $2 AND (NOT $3 OR status = 'verified')`,
    { bind: [workspaceId, domainName, options.verifiedOnly ?? false], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  return row ? { domainName: row.name, selector: row.dkim_selector, privateKeySealed: row.dkim_private_key_sealed } : null;
}

/**
 * Domains whose background verification never ran or has stopped, across workspaces (the watchdog's
 * sweep): never checked although created a while ago, or verified but not re-checked for too long.
 */
export async function findUnwatchedDomains(
  db: Sequelize,
  options: { createdBefore: Date; verifiedCheckedBefore: Date; limit: number },
): Promise<Array<{ id: string; workspaceId: string }>> {
  const rows = await db.query<{ id: string; workspace_id: string }>(
    `SELECT id, workspace_id FROM domains
     WHERE (last_checked_at IS NULL AND created_at < $1)
        OR (status = 'verified' AND last_checked_at < $2)
     ORDER BY last_checked_at NULLS FIRST, id
     LIMIT $3`,
    { bind: [options.createdBefore, options.verifiedCheckedBefore, options.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id }));
}
