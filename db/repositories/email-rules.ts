import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { RuleAction, RuleMatchType } from '../../core/inbox/rules';

/** The allow/block rules as the API manages them; the SMTP listener reads them through inbox-mail.ts. */
export interface EmailRuleRecord {
  id: string;
  action: RuleAction;
  matchType: RuleMatchType;
  value: string;
  note: string | null;
  createdAt: Date;
}

interface EmailRuleRow {
  id: string;
  action: RuleAction;
  match_type: RuleMatchType;
  value: string;
  note: string | null;
  created_at: Date;
}

const toRecord = (row: EmailRuleRow): EmailRuleRecord => ({
  id: row.id,
  action: row.action,
  matchType: row.match_type,
  value: row.value,
  note: row.note,
  createdAt: row.created_at,
});

const COLUMNS = 'id, action, match_type, value, note, created_at';

/**
 * The SMTP listener reads all of a workspace's rules for every mail it is offered, so their number is bounded;
 * a list longer than this is better kept as domains than as addresses.
 */
export const MAX_EMAIL_RULES = 1_000;

/**
 * Adds a rule (`value` already lower-case). The natural key (action, matchType, value) is unique per
 * workspace, so the same rule twice ends in the database and answers the id of the rule there.
 */
export async function insertEmailRule(
  db: Sequelize,
  workspaceId: string,
  rule: { action: RuleAction; matchType: RuleMatchType; value: string; note: string | null },
): Promise<{ created: EmailRuleRecord } | { taken: string } | 'limit'> {
  const rows = await db.query<EmailRuleRow>(
    `INSERT INTO email_rules (id, workspace_id, action, match_type, value, note)
     SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT count(*) FROM email_rules WHERE workspace_id = $2) < $7
     ON CONFLICT (workspace_id, action, match_type, value) DO NOTHING RETURNING ${COLUMNS}`,
    { bind: [randomUUID(), workspaceId, rule.action, rule.matchType, rule.value, rule.note, MAX_EMAIL_RULES], type: QueryTypes.SELECT },
  );
  if (rows[0]) return { created: toRecord(rows[0]) };
  const existing = await db.query<{ id: string }>(
    'SELECT id FROM email_rules WHERE workspace_id = $1 AND action = $2 AND match_type = $3 AND value = $4',
    { bind: [workspaceId, rule.action, rule.matchType, rule.value], type: QueryTypes.SELECT },
  );
  return existing[0] ? { taken: existing[0].id } : 'limit';
}

/** Newest first. A workspace's rules are few (the listener reads them all on every mail). */
export async function listEmailRuleRecords(db: Sequelize, workspaceId: string): Promise<EmailRuleRecord[]> {
  const rows = await db.query<EmailRuleRow>(`SELECT ${COLUMNS} FROM email_rules WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toRecord);
}

export async function deleteEmailRule(db: Sequelize, workspaceId: string, id: string): Promise<EmailRuleRecord | null> {
  const rows = await db.query<EmailRuleRow>(`DELETE FROM email_rules WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, {
    bind: [workspaceId, id],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}
