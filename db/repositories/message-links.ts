import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { LinkRole } from '../../core/tracking/link-roles';
import type { TrackedLink } from '../../core/tracking/tracked-html';

/** The link tables of tracked messages: what a click token may redirect to, written once at render. */
export async function saveMessageLinks(
  db: Sequelize,
  workspaceId: string,
  tables: ReadonlyArray<{ messageId: string; links: readonly TrackedLink[] }>,
  transaction: Transaction,
): Promise<void> {
  const rows = tables.flatMap(({ messageId, links }) => links.map((link) => ({ messageId, ...link })));
  if (rows.length === 0) return;
  // A second render of the same message (two attempts racing) writes the same table: the first one stays.
  await db.query(
    `INSERT INTO message_links (message_id, workspace_id, position, link_id, url, target, canonical_url, role, honeypot)
     SELECT message_id, $1, position, link_id, url, target, canonical_url, role, honeypot
     FROM unnest($2::uuid[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[])
       AS l (message_id, position, link_id, url, target, canonical_url, role, honeypot)
     ON CONFLICT DO NOTHING`,
    {
      bind: [
        workspaceId,
        rows.map((row) => row.messageId), rows.map((row) => row.position), rows.map((row) => row.linkId), rows.map((row) => row.url),
        rows.map((row) => row.target), rows.map((row) => row.canonicalUrl), rows.map((row) => row.role), rows.map((row) => row.honeypot),
      ],
      transaction,
    },
  );
}

/** What a tracking hit needs to know about its message: whose it is, when it was sent, its links. */
export interface TrackedMessage {
  workspaceId: string;
  /** When the provider accepted it; null until that is recorded. */
  sentAt: Date | null;
  links: Map<number, TrackedLink>;
}

interface LinkRow {
  position: number;
  link_id: string;
  url: string;
  target: string;
  canonical_url: string;
  role: LinkRole | null;
  honeypot: boolean;
}

/**
 * Found by id alone: a signed token is the only key a public hit has. One round trip, on the primary key
 * and the event timeline's index.
 */
export async function findTrackedMessage(db: Sequelize, messageId: string): Promise<TrackedMessage | null> {
  const rows = await db.query<{ workspace_id: string; sent_at: Date | null; links: LinkRow[] | null }>(
    `SELECT m.workspace_id,
       (SELECT min(e.created_at) FROM message_events e WHERE e.message_id = m.id AND e.type = 'sent') AS sent_at,
       (SELECT json_agg(l) FROM message_links l WHERE l.message_id = m.id) AS links
     FROM messages m WHERE m.id = $1`,
    { bind: [messageId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  const links = new Map<number, TrackedLink>();
  for (const link of row.links ?? []) {
    links.set(link.position, {
      position: link.position,
      linkId: link.link_id,
      url: link.url,
      target: link.target,
      canonicalUrl: link.canonical_url,
      role: link.role,
      honeypot: link.honeypot,
    });
  }
  return { workspaceId: row.workspace_id, sentAt: row.sent_at ? new Date(row.sent_at) : null, links };
}
