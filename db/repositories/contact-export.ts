import { QueryTypes, type Sequelize } from 'sequelize';
import type { Consent } from '../../core/identities';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';
import { type ContactFilters, filterConditions } from './contacts';

/** Which contacts an export holds: all of the workspace's, or a list's, a tag's or a segment's. */
export type ExportFilters = Pick<ContactFilters, 'listId' | 'tagId' | 'condition'>;

/** One contact as the CSV export writes it: primary identities, and tags and lists by name. */
export interface ExportedContact {
  id: string;
  createdAt: Date;
  email: string | null;
  phone: string | null;
  telegram: string | null;
  /** The consent of the primary email identity, else of the primary WhatsApp one, else Telegram's. */
  consent: Consent | null;
  tags: string[];
  lists: string[];
  attributes: Record<string, unknown>;
}

interface ExportRow {
  id: string;
  created_at: Date;
  email: string | null;
  phone: string | null;
  telegram: string | null;
  consent: Consent | null;
  tags: string[] | null;
  lists: string[] | null;
  attributes: Record<string, unknown>;
}

/** A segment condition is an audience query (see audience-session.ts), run on `audienceDb`; plain filters are not. */
function runner(db: Sequelize, filters: ExportFilters, audienceDb: Sequelize) {
  return <T extends object>(sql: string, bind: unknown[]) =>
    filters.condition
      ? inAudienceSession(audienceDb, (transaction) => audienceDb.query<T>(sql, { bind, type: QueryTypes.SELECT, transaction }))
      : db.query<T>(sql, { bind, type: QueryTypes.SELECT });
}

/**
 * Every attribute key the exported contacts hold, sorted: the export's `attribute:<key>` columns. One pass
 * over the contacts' attributes before the first row, since a CSV header cannot grow afterwards.
 */
export async function exportAttributeKeys(db: Sequelize, workspaceId: string, filters: ExportFilters, audienceDb: Sequelize = db): Promise<string[]> {
  const params = new BindParams();
  const where = filterConditions(filters, params, params.add(workspaceId, 'uuid')).join(' AND ');
  const rows = await runner(db, filters, audienceDb)<{ key: string }>(
    `SELECT DISTINCT key FROM contacts c CROSS JOIN LATERAL jsonb_object_keys(c.attributes) AS key WHERE ${where} ORDER BY key`,
    params.values,
  );
  return rows.map((row) => row.key);
}

/**
 * The next `limit` contacts after `after` in id order (keyset paging over the (workspace_id, id) index:
 * every page costs the same however deep the export is, and memory holds one page).
 */
export async function exportPage(
  db: Sequelize,
  workspaceId: string,
  filters: ExportFilters,
  after: string | null,
  limit: number,
  audienceDb: Sequelize = db,
): Promise<ExportedContact[]> {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const where = filterConditions(filters, params, workspace);
  if (after) where.push(`c.id > ${params.add(after, 'uuid')}`);
  const rows = await runner(db, filters, audienceDb)<ExportRow>(
    `SELECT c.id, c.created_at, c.attributes, p.email, p.phone, p.telegram, p.consent,
       (SELECT array_agg(t.name ORDER BY lower(t.name)) FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id) AS tags,
       (SELECT array_agg(l.name ORDER BY lower(l.name)) FROM list_members lm JOIN lists l ON l.id = lm.list_id WHERE lm.contact_id = c.id) AS lists
     FROM contacts c
     LEFT JOIN LATERAL (
       SELECT max(i.address) FILTER (WHERE i.channel = 'email') AS email,
              max(i.address) FILTER (WHERE i.channel = 'whatsapp') AS phone,
              max(i.address) FILTER (WHERE i.channel = 'telegram') AS telegram,
              (array_agg(i.consent ORDER BY array_position(ARRAY['email', 'whatsapp', 'telegram'], i.channel)))[1] AS consent
       FROM contact_identities i WHERE i.workspace_id = ${workspace} AND i.contact_id = c.id AND i.is_primary
     ) p ON true
     WHERE ${where.join(' AND ')}
     ORDER BY c.id
     LIMIT ${params.add(limit, 'int')}`,
    params.values,
  );
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at,
    email: row.email,
    phone: row.phone,
    telegram: row.telegram,
    consent: row.consent,
    tags: row.tags ?? [],
    lists: row.lists ?? [],
    attributes: row.attributes,
  }));
}
