import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * DELETE /domains/:id: what still sends from a domain, and its removal. The row holds the DKIM key pair and
 * the record checks, so both go with it; messages name their sender by address, not by domain id, so the
 * mail already sent from it (and its events) stays.
 */

export interface DomainUsers {
  /** Campaigns not finished (draft excluded: it sends nothing until its sender is checked at send). */
  campaigns: Array<{ id: string; name: string; status: string }>;
  /** Active or paused journeys whose published email step sends from the domain (by `from`, or by its default sender). */
  journeys: Array<{ id: string; name: string; status: string }>;
  /** Every inbox on the domain, disabled ones too: deleting the domain would delete their threads and mail. */
  inboxes: Array<{ id: string; address: string; status: string }>;
}

/** The domain part of a `from` as campaigns and journeys store it (`a@b` or `Name <a@b>`), lower-case. */
const FROM_DOMAIN = (column: string) => `lower(substring(${column} from '@([^@<>[:space:]]+)>?[[:space:]]*$'))`;

async function domainUsers(db: Sequelize, workspaceId: string, domain: { id: string; name: string }, transaction: Transaction): Promise<DomainUsers> {
  const bind = [workspaceId, domain.id, domain.name];
  const campaigns = await db.query<{ id: string; name: string; status: string }>(
    `SELECT id, name, status FROM campaigns
     WHERE workspace_id = $1 AND status IN ('scheduled', 'sending', 'paused') AND ${FROM_DOMAIN('from_address')} = $2
     ORDER BY created_at, id`,
    { bind: [workspaceId, domain.name], type: QueryTypes.SELECT, transaction },
  );
  // A message step without `from` sends from the workspace's default sender (db/repositories/journey-messages.ts
  // defaultSender): it uses this domain when this domain is the one that default comes from.
  const journeys = await db.query<{ id: string; name: string; status: string }>(
    `WITH default_domain AS (
       SELECT id FROM domains WHERE workspace_id = $1 AND status = 'verified' AND default_from_address IS NOT NULL
       ORDER BY verified_at NULLS LAST, created_at LIMIT 1
     )
     SELECT a.id, a.name, a.status FROM automations a
     JOIN automation_versions v ON v.id = a.current_version_id
     WHERE a.workspace_id = $1 AND a.status IN ('active', 'paused')
       AND EXISTS (
         SELECT 1 FROM jsonb_array_elements(v.graph -> 'nodes') AS node
         WHERE node ->> 'type' = 'message'
           AND (node ->> 'preferredChannel' = 'email' OR node -> 'fallbackChain' @> '["email"]'::jsonb)
           AND CASE WHEN node ->> 'from' IS NOT NULL THEN ${FROM_DOMAIN("node ->> 'from'")} = $3
                    ELSE EXISTS (SELECT 1 FROM default_domain WHERE default_domain.id = $2) END)
     ORDER BY a.created_at, a.id`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  const inboxes = await db.query<{ id: string; address: string; status: string }>(
    `SELECT id, local_part || '@' || $3 AS address, status FROM inboxes WHERE workspace_id = $1 AND domain_id = $2 ORDER BY created_at, id`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  return { campaigns, journeys, inboxes };
}

export type DomainDeletion = { deleted: true; domain: { name: string; region: string } } | { deleted: false; reason: 'not_found' } | { deleted: false; reason: 'in_use'; usedBy: DomainUsers };

/**
 * Deletes the domain unless something still sends from it. The row is locked first, so a campaign or inbox
 * made meanwhile either sees the domain gone or is counted here.
 */
export async function deleteUnusedDomain(db: Sequelize, workspaceId: string, domainId: string): Promise<DomainDeletion> {
  return db.transaction(async (transaction) => {
    const [domain] = await db.query<{ id: string; name: string; region: string }>('SELECT id, name, region FROM domains WHERE workspace_id = $1 AND id = $2 FOR UPDATE', {
      bind: [workspaceId, domainId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!domain) return { deleted: false, reason: 'not_found' };
    const usedBy = await domainUsers(db, workspaceId, domain, transaction);
    if (usedBy.campaigns.length || usedBy.journeys.length || usedBy.inboxes.length) return { deleted: false, reason: 'in_use', usedBy };
    await db.query('DELETE FROM domains WHERE workspace_id = $1 AND id = $2', { bind: [workspaceId, domainId], transaction });
    return { deleted: true, domain: { name: domain.name, region: domain.region } };
  });
}
