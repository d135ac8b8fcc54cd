import { QueryTypes, type Sequelize } from 'sequelize';
import type { Channel } from '../../core/identities';
import type { RecentSend } from '../../core/journeys/delivery-window';
import { type PlanName, PLANS, usagePeriodAt, periodKey } from '../../core/plans';
import { releaseQuota, reserveQuota } from './usage';

/**
 * What a journey message reads (the contact, the templates' current versions, ready attachments, the
 * workspace's default sender, the contact's recent marketing sends) and how it is written to the outbox:
 * one row per enrollment and node, whatever the retries.
 */

export interface JourneyContact {
  attributes: Record<string, unknown>;
  /** The primary email identity's address, for `contact.email` in templates. */
  email: string | null;
}

export async function findJourneyContact(db: Sequelize, workspaceId: string, contactId: string): Promise<JourneyContact | null> {
  const [row] = await db.query<{ attributes: Record<string, unknown>; email: string | null }>(
    `SELECT c.attributes,
       (SELECT i.address FROM contact_identities i WHERE i.workspace_id = c.workspace_id AND i.contact_id = c.id AND i.channel = 'email'
        ORDER BY i.is_primary DESC, i.created_at LIMIT 1) AS email
     FROM contacts c WHERE c.workspace_id = $1 AND c.id = $2`,
    { bind: [workspaceId, contactId], type: QueryTypes.SELECT },
  );
  return row ?? null;
}

/** A message already written for this enrollment and node (a retried activity finds its first attempt's). */
export async function findJourneyMessage(db: Sequelize, workspaceId: string, messageId: string): Promise<{ id: string; channel: Channel } | null> {
  const [row] = await db.query<{ id: string; channel: Channel }>('SELECT id, channel FROM messages WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, messageId],
    type: QueryTypes.SELECT,
  });
  return row ?? null;
}

/** The current version of each live template named, by template id. */
export async function currentTemplateVersions(db: Sequelize, workspaceId: string, templateIds: readonly string[]): Promise<Map<string, string>> {
  if (templateIds.length === 0) return new Map();
  const rows = await db.query<{ id: string; version_id: string }>(
    `SELECT t.id, v.id AS version_id FROM templates t JOIN template_versions v ON v.template_id = t.id AND v.version = t.current_version
     WHERE t.workspace_id = $1 AND t.id = ANY($2::uuid[]) AND t.deleted_at IS NULL`,
    { bind: [workspaceId, templateIds], type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [row.id, row.version_id]));
}

export interface AttachmentRef {
  id: string;
  filename: string;
  contentType: string;
  size: number;
}

/** The ready attachments among these ids, in the order given (a deleted one is left out). */
export async function readyAttachmentRefs(db: Sequelize, workspaceId: string, ids: readonly string[]): Promise<AttachmentRef[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: string; filename: string; content_type: string; size: string }>(
    `SELECT id, filename, content_type, size FROM attachments WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND status = 'ready'`,
    { bind: [workspaceId, ids], type: QueryTypes.SELECT },
  );
  const byId = new Map(rows.map((row) => [row.id, { id: row.id, filename: row.filename, contentType: row.content_type, size: Number(row.size) }]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The default sender of one of the workspace's verified domains (the first verified), if any has one. */
export async function defaultSender(db: Sequelize, workspaceId: string): Promise<{ address: string; name: string | null } | null> {
  const [row] = await db.query<{ default_from_address: string; default_from_name: string | null }>(
    `SELECT default_from_address, default_from_name FROM domains
     WHERE workspace_id = $1 AND status = 'verified' AND default_from_address IS NOT NULL
     ORDER BY verified_at NULLS LAST, created_at LIMIT 1`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return row ? { address: row.default_from_address, name: row.default_from_name } : null;
}

/**
 * The contact's marketing messages (campaign and journey; transactional ones are exempt) created in
 * (since, until], as frequency caps count them: one range of messages_contact_recent_idx. A simulation
 * gives `until`, its start; the journey reads up to now.
 */
export async function recentMarketingSends(db: Sequelize, workspaceId: string, contactId: string, since: Date, until?: Date): Promise<RecentSend[]> {
  const rows = await db.query<{ channel: Channel; created_at: Date }>(
    `SELECT channel, created_at FROM messages
     WHERE workspace_id = $1 AND contact_id = $2 AND kind <> 'transactional' AND created_at > $3
       AND ($4::timestamptz IS NULL OR created_at <= $4)
     ORDER BY created_at LIMIT 10000`,
    { bind: [workspaceId, contactId, since, until ?? null], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ channel: row.channel, at: new Date(row.created_at) }));
}

export interface NewJourneyMessage {
  id: string;
  enrollmentId: string;
  automationId: string;
  nodeId: string;
  contactId: string;
  channel: Channel;
  to: string;
  fromAddress: string | null;
  templateId: string;
  content: Record<string, unknown>;
  /** The journey's clock: frequency caps count messages by it, so a journey decides by one clock. */
  createdAt: Date;
}

export type JourneyWrite = 'written' | 'exists' | 'quota_exceeded';

/**
 * Writes a journey message to the outbox with one unit of the plan's quota, in one transaction. Kind
 * `automation`: the dispatcher sends it after transactional messages and before campaigns, fairly
 * between workspaces. The id is derived from the enrollment and node, so a retried activity writes
 * nothing twice (and gives the unit it reserved back).
 */
export async function writeJourneyMessage(db: Sequelize, workspaceId: string, message: NewJourneyMessage): Promise<JourneyWrite> {
  return db.transaction(async (transaction) => {
    const [workspace] = await db.query<{ plan: PlanName }>('SELECT plan FROM workspaces WHERE id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
      transaction,
    });
    const period = usagePeriodAt(new Date());
    // Counted on the journey's clock, as the message's created_at, so the release below names the same day.
    const entry = { channel: message.channel, kind: 'automation' as const, at: message.createdAt };
    if ((await reserveQuota(db, workspaceId, PLANS[workspace.plan], period, 1, entry, transaction)) === null) return 'quota_exceeded';
    const inserted = await db.query(
      `INSERT INTO messages (id, workspace_id, kind, channel, status, idempotency_key, request_hash, from_address, to_addresses, subject,
         content, template_id, enrollment_id, automation_id, journey_node_id, contact_id, quota_units, quota_period, created_at, updated_at)
       VALUES ($1, $2, 'automation', $3, 'queued', $4, 'automation', $5, $6, NULL, $7::jsonb, $8, $9, $10, $11, $12, 1, $13, $14, $14)
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      {
        bind: [
          message.id, workspaceId, message.channel, `automation:${message.enrollmentId}:${message.nodeId}`, message.fromAddress, [message.to],
          JSON.stringify(message.content), message.templateId, message.enrollmentId, message.automationId,
          message.nodeId, message.contactId, periodKey(period), message.createdAt,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (inserted.length === 1) return 'written';
    await releaseQuota(db, workspaceId, periodKey(period), 1, entry, transaction);
    return 'exists';
  });
}
