import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

export type InboxStatus = 'active' | 'disabled';

export interface InboxRecord {
  id: string;
  workspaceId: string;
  domainId: string;
  domain: string;
  localPart: string;
  /** `localPart@domain`, the local part as created, the domain as stored (lower-case). */
  address: string;
  displayName: string | null;
  status: InboxStatus;
  /** Whether the domain receives mail now (POST /domains/:id/inbound): an inbox of a domain without it only sends. */
  inboundEnabled: boolean;
  createdAt: Date;
}

interface InboxRow {
  id: string;
  workspace_id: string;
  domain_id: string;
  domain: string;
  local_part: string;
  display_name: string | null;
  status: InboxStatus;
  inbound_enabled: boolean;
  created_at: Date;
}

const COLUMNS = `i.id, i.workspace_id, i.domain_id, d.name AS domain, i.local_part, i.display_name, i.status, d.inbound_enabled, i.created_at`;

function toRecord(row: InboxRow): InboxRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    domainId: row.domain_id,
    domain: row.domain,
    localPart: row.local_part,
    address: `${row.local_part}@${row.domain}`,
    displayName: row.display_name,
    status: row.status,
    inboundEnabled: row.inbound_enabled,
    createdAt: row.created_at,
  };
}

export type InboxClaim = { created: InboxRecord } | { taken: string } | 'domain_not_verified';

/**
 * Creates an inbox on a verified domain of the workspace. The unique index on (domain, lower(local_part)) ends
 * a second inbox of the same address, in any case, in the database: the caller gets the id of the one there.
 */
export async function insertInbox(
  db: Sequelize,
  workspaceId: string,
  inbox: { domainId: string; localPart: string; displayName: string | null },
): Promise<InboxClaim> {
  const rows = await db.query<{ id: string }>(
    `INSERT INTO inboxes (id, workspace_id, domain_id, local_part, display_name)
     SELECT $1, d.workspace_id, d.id, $4, $5 FROM domains d WHERE d.workspace_id = $2 AND d.id = $3 AND d.status = 'verified'
     ON CONFLICT (domain_id, lower(local_part)) DO NOTHING
     RETURNING id`,
    { bind: [randomUUID(), workspaceId, inbox.domainId, inbox.localPart, inbox.displayName], type: QueryTypes.SELECT },
  );
  if (rows[0]) return { created: (await findInbox(db, workspaceId, rows[0].id)) as InboxRecord };
  const existing = await db.query<{ id: string }>(
    `SELECT i.id FROM inboxes i JOIN domains d ON d.id = i.domain_id
     WHERE i.workspace_id = $1 AND i.domain_id = $2 AND lower(i.local_part) = lower($3) AND d.status = 'verified'`,
    { bind: [workspaceId, inbox.domainId, inbox.localPart], type: QueryTypes.SELECT },
  );
  return existing[0] ? { taken: existing[0].id } : 'domain_not_verified';
}

export async function findInbox(db: Sequelize, workspaceId: string, id: string): Promise<InboxRecord | null> {
  const rows = await db.query<InboxRow>(
    `SELECT ${COLUMNS} FROM inboxes i JOIN domains d ON d.id = i.domain_id WHERE i.workspace_id = $1 AND i.id = $2`,
    { bind: [workspaceId, id], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Newest first (decisions: every list is ordered newest first), a page by limit and offset. */
export async function listInboxes(db: Sequelize, workspaceId: string, page: { limit: number; offset: number }): Promise<InboxRecord[]> {
  const rows = await db.query<InboxRow>(
    `SELECT ${COLUMNS} FROM inboxes i JOIN domains d ON d.id = i.domain_id
     WHERE i.workspace_id = $1 ORDER BY i.created_at DESC, i.id DESC LIMIT $2 OFFSET $3`,
    { bind: [workspaceId, page.limit, page.offset], type: QueryTypes.SELECT },
  );
  return rows.map(toRecord);
}

/** Absent fields stay; `displayName: null` clears the name (the domain's default display name then applies). */
export async function updateInbox(
  db: Sequelize,
  workspaceId: string,
  id: string,
  changes: { displayName?: string | null; status?: InboxStatus },
): Promise<InboxRecord | null> {
  const rows = await db.query<{ id: string }>(
    `UPDATE inboxes SET
       display_name = CASE WHEN $3 THEN $4 ELSE display_name END,
       status = COALESCE($5, status),
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING id`,
    {
      bind: [workspaceId, id, changes.displayName !== undefined, changes.displayName ?? null, changes.status ?? null],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? findInbox(db, workspaceId, id) : null;
}

/** Deletes the inbox; its threads, messages and counters go with it (foreign keys ON DELETE CASCADE). */
export async function deleteInbox(db: Sequelize, workspaceId: string, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>('DELETE FROM inboxes WHERE workspace_id = $1 AND id = $2 RETURNING id', {
    bind: [workspaceId, id],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}
