import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { normalizeSubject } from '../../core/inbox/threading';

export interface ReceivedMail {
  inboxId: string;
  workspaceId: string;
  /** A thread to add it to; a new thread (folder inbox) when absent. */
  threadId?: string;
  messageIdHeader: string;
  references?: string[];
  from: { address: string; name?: string };
  to: string[];
  cc?: string[];
  subject: string;
  text: string;
  html?: string;
  /** As the workflow lists stored files: `{ index, filename, contentType, size, contentId, inline, blobKey }`. */
  attachments?: object[];
}

/**
 * An inbound message as the inbound-mail workflow leaves it (status processed, threaded, counted), written
 * straight to the tables of migration 0021: the contract between that workflow and the inbox API.
 */
export async function receiveMail(db: Sequelize, mail: ReceivedMail): Promise<{ id: string; threadId: string }> {
  const id = randomUUID();
  const threadId = mail.threadId ?? randomUUID();
  await db.query(
    `WITH thread AS (
       INSERT INTO threads AS t (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count, unread_count)
       VALUES ($3, $1, $2, $4, $5, ARRAY[lower($6)], 'inbox', 1, 1)
       ON CONFLICT (id) DO UPDATE SET message_count = t.message_count + 1, unread_count = t.unread_count + 1, last_message_at = now()
       RETURNING id
     ),
     counted AS (
       INSERT INTO inbox_daily_counters AS c (workspace_id, inbox_id, day, received) VALUES ($1, $2, (now() AT TIME ZONE 'UTC')::date, 1)
       ON CONFLICT (inbox_id, day) DO UPDATE SET received = c.received + 1
     )
     INSERT INTO inbox_messages (id, workspace_id, inbox_id, thread_id, direction, status, message_id_header, "references",
       from_address, from_name, to_addresses, cc_addresses, subject, text, html, reply_text, attachments, auth)
     SELECT $7, $1, $2, thread.id, 'in', 'processed', $8, $9::text[], $6, $10, $11::text[], $12::text[], $4, $13, $14, $13, $15::jsonb,
       '{"spf":{"result":"pass"},"dkim":{"result":"pass"},"dmarc":{"result":"pass"}}'::jsonb
     FROM thread`,
    {
      bind: [
        mail.workspaceId, mail.inboxId, threadId, mail.subject, normalizeSubject(mail.subject), mail.from.address, id, mail.messageIdHeader,
        mail.references ?? [], mail.from.name ?? null, mail.to, mail.cc ?? [], mail.text, mail.html ?? null,
        JSON.stringify(mail.attachments ?? []),
      ],
    },
  );
  return { id, threadId };
}
