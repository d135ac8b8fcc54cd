import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { InboundAuthResults } from '../../core/inbox/auth-results';
import type { EmailRule } from '../../core/inbox/rules';

/** The SMTP listener's reads and writes: who a recipient is, the rules of its workspace, the accepted row. */

export type MailboxLookup =
  | { kind: 'inbox'; workspaceId: string; inboxId: string }
  /** An inbound-enabled verified domain of ours without an active inbox of that local part. */
  | { kind: 'unknown_mailbox' }
  /** Not a domain we take mail for (unknown, unverified, or inbound not enabled): we are no relay. */
  | { kind: 'not_ours' };

/**
 * One probe for a recipient. `domains_verified_name_key` makes the verified domain of a name unique across
 * workspaces, so the name alone says whose mailbox it is.
 */
export async function findMailbox(db: Sequelize, localPart: string, domain: string): Promise<MailboxLookup> {
  const rows = await db.query<{ workspace_id: string; inbox_id: string | null }>(
    `SELECT d.workspace_id, i.id AS inbox_id
       FROM domains d
       LEFT JOIN inboxes i ON i.domain_id = d.id AND lower(i.local_part) = lower($1) AND i.status = 'active'
      WHERE d.name = $2 AND d.status = 'verified' AND d.inbound_enabled`,
    { bind: [localPart, domain], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return { kind: 'not_ours' };
  return row.inbox_id ? { kind: 'inbox', workspaceId: row.workspace_id, inboxId: row.inbox_id } : { kind: 'unknown_mailbox' };
}

export async function listEmailRules(db: Sequelize, workspaceId: string): Promise<EmailRule[]> {
  return db.query<EmailRule>(
    'SELECT action, match_type AS "matchType", value FROM email_rules WHERE workspace_id = $1',
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
}

export interface ReceivedMessage {
  workspaceId: string;
  inboxId: string;
  /** The Message-ID header (normalized, without brackets), or null when the message has none. */
  messageIdHeader: string | null;
  envelopeFrom: string | null;
  envelopeTo: string;
  remoteAddress: string | null;
  rawBlobKey: string;
  rawSize: number;
  auth: InboundAuthResults;
}

/**
 * The point of acceptance of an inbound message: a row in status `received`, its workflow not yet started.
 * A second delivery of the same Message-ID to the same inbox (the sender retrying after our 250 was lost)
 * inserts nothing and answers null: the mail is already ours.
 */
export async function insertReceivedMessage(db: Sequelize, message: ReceivedMessage): Promise<string | null> {
  const rows = await db.query<{ id: string }>(
    `INSERT INTO inbox_messages (id, workspace_id, inbox_id, direction, status, message_id_header, envelope_from, envelope_to,
                                 remote_address, raw_blob_key, raw_size, auth)
     VALUES ($1, $2, $3, 'in', 'received', $4, $5, $6, $7, $8, $9, $10::jsonb)
     ON CONFLICT (inbox_id, message_id_header) WHERE direction = 'in' AND message_id_header IS NOT NULL DO NOTHING
     RETURNING id`,
    {
      bind: [
        randomUUID(), message.workspaceId, message.inboxId, message.messageIdHeader, message.envelopeFrom, message.envelopeTo,
        message.remoteAddress, message.rawBlobKey, message.rawSize, JSON.stringify(message.auth),
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0]?.id ?? null;
}
