import type { AcceptanceFollowUp } from './message-acceptance';
import type { InboxAttachment } from './inbox-messages';

/** What an inbox send writes beside its messages row: the out row, its thread, the day's `sent` counter. */
export interface InboxOutRow {
  /** The inbox row's id: a new one, or the draft being sent (its row becomes the sent message). */
  id: string;
  inboxId: string;
  threadId: string;
  /** The messages row carrying it. */
  messageId: string;
  /** `<messageId>@<from domain>` without brackets: the Message-ID providers/mime.ts writes. */
  messageIdHeader: string;
  inReplyTo: string | null;
  references: string[];
  fromAddress: string;
  fromName: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  html: string | null;
  text: string | null;
  attachments: InboxAttachment[];
  normalizedSubject: string;
  /** Correspondents' lower-case addresses, added to the thread's. */
  participants: string[];
  /** False when a draft already counted in its thread's messages. */
  newMessage: boolean;
}

/**
 * The acceptance follow-up (message-acceptance.ts) of an inbox send: the thread is created (a new
 * conversation, folder `sent`) or moved on (a reply; a thread still in `drafts` goes to `sent`), the out row
 * is inserted in status `queued` or, for a draft, the draft row becomes it (only while still a draft), and the
 * inbox's `sent` counter of the day moves, all only when the message was accepted.
 */
export function inboxOutFollowUp(row: InboxOutRow): AcceptanceFollowUp {
  return {
    name: 'accept-inbox-message',
    ctes: `
      out_row AS (
        SELECT * FROM jsonb_to_record($6::jsonb) AS o(
          id uuid, inbox_id uuid, thread_id uuid, message_id uuid, message_id_header text, in_reply_to text, "references" text[],
          from_address text, from_name text, to_addresses text[], cc_addresses text[], bcc_addresses text[], subject text, html text,
          text text, attachments jsonb, normalized_subject text, participants text[], new_message boolean)
        WHERE EXISTS (SELECT 1 FROM inserted)
      ),
      thread AS (
        INSERT INTO threads AS t (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count, last_message_at)
        SELECT thread_id, $1, inbox_id, subject, normalized_subject, participants, 'sent', CASE WHEN new_message THEN 1 ELSE 0 END, now() FROM out_row
        ON CONFLICT (id) DO UPDATE SET
          message_count = t.message_count + EXCLUDED.message_count,
          participants = ARRAY(SELECT DISTINCT unnest(t.participants || EXCLUDED.participants)),
          folder = CASE WHEN t.folder = 'drafts' THEN 'sent' ELSE t.folder END,
          last_message_at = now(),
          updated_at = now()
        RETURNING id
      ),
      inbox_row AS (
        INSERT INTO inbox_messages AS im (id, workspace_id, inbox_id, thread_id, direction, status, message_id_header, in_reply_to, "references",
          from_address, from_name, to_addresses, cc_addresses, bcc_addresses, subject, html, text, attachments, message_id)
        SELECT id, $1, inbox_id, thread_id, 'out', 'queued', message_id_header, in_reply_to, "references", from_address, from_name,
          to_addresses, cc_addresses, bcc_addresses, subject, html, text, attachments, message_id
        FROM out_row
        ON CONFLICT (id) DO UPDATE SET
          status = 'queued', thread_id = EXCLUDED.thread_id, message_id_header = EXCLUDED.message_id_header, in_reply_to = EXCLUDED.in_reply_to,
          "references" = EXCLUDED."references", from_address = EXCLUDED.from_address, from_name = EXCLUDED.from_name,
          to_addresses = EXCLUDED.to_addresses, cc_addresses = EXCLUDED.cc_addresses, bcc_addresses = EXCLUDED.bcc_addresses,
          subject = EXCLUDED.subject, html = EXCLUDED.html, text = EXCLUDED.text, attachments = EXCLUDED.attachments,
          message_id = EXCLUDED.message_id, created_at = now(), updated_at = now()
        WHERE im.status = 'draft' AND im.workspace_id = $1
        RETURNING id
      ),
      sent_counter AS (
        INSERT INTO inbox_daily_counters AS c (workspace_id, inbox_id, day, sent)
        SELECT $1, inbox_id, (now() AT TIME ZONE 'UTC')::date, 1 FROM out_row
        ON CONFLICT (inbox_id, day) DO UPDATE SET sent = c.sent + 1
      )`,
    values: [
      JSON.stringify({
        id: row.id,
        inbox_id: row.inboxId,
        thread_id: row.threadId,
        message_id: row.messageId,
        message_id_header: row.messageIdHeader,
        in_reply_to: row.inReplyTo,
        references: row.references,
        from_address: row.fromAddress,
        from_name: row.fromName,
        to_addresses: row.to,
        cc_addresses: row.cc,
        bcc_addresses: row.bcc,
        subject: row.subject,
        html: row.html,
        text: row.text,
        attachments: row.attachments,
        normalized_subject: row.normalizedSubject,
        participants: row.participants,
        new_message: row.newMessage,
      }),
    ],
  };
}
