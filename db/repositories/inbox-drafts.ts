import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { InboxAttachment } from './inbox-messages';

/** Drafts of an inbox: saved and deleted with their thread's count in one statement each. Sending one is inbox-outbound.ts. */

export interface NewDraft {
  inboxId: string;
  /** The thread it answers, or null for a new conversation (a thread in folder `drafts` is made for it). */
  threadId: string | null;
  fromAddress: string;
  fromName: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  attachments: InboxAttachment[];
  normalizedSubject: string;
  /** The correspondents' lower-case addresses (threads.participants), the inbox excluded. */
  participants: string[];
}

/** A draft row and, for a new conversation, its thread, in one statement. Returns the draft and thread ids. */
export async function insertDraft(db: Sequelize, workspaceId: string, draft: NewDraft): Promise<{ draftId: string; threadId: string }> {
  const draftId = randomUUID();
  const threadId = draft.threadId ?? randomUUID();
  await db.query(
    `WITH thread AS (
       INSERT INTO threads AS t (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count)
       VALUES ($3, $1, $2, COALESCE($9, ''), $14, $15::text[], 'drafts', 1)
       ON CONFLICT (id) DO UPDATE SET message_count = t.message_count + 1, updated_at = now()
       WHERE t.workspace_id = $1 AND t.inbox_id = $2
       RETURNING id
     )
     INSERT INTO inbox_messages (id, workspace_id, inbox_id, thread_id, direction, status, from_address, from_name,
       to_addresses, cc_addresses, bcc_addresses, subject, html, text, attachments)
     SELECT $4, $1, $2, thread.id, 'out', 'draft', $5, $6, $7::text[], $8::text[], $13::text[], $9, $10, $11, $12::jsonb FROM thread`,
    {
      bind: [
        workspaceId, draft.inboxId, threadId, draftId, draft.fromAddress, draft.fromName, draft.to, draft.cc, draft.subject,
        draft.html, draft.text, JSON.stringify(draft.attachments), draft.bcc, draft.normalizedSubject, draft.participants,
      ],
    },
  );
  return { draftId, threadId };
}

/**
 * Deletes a draft. A new conversation's thread that holds nothing else goes with it; a reply draft's thread
 * counts one message less.
 */
export async function deleteDraft(db: Sequelize, workspaceId: string, inboxId: string, draftId: string): Promise<boolean> {
  const rows = await db.query<{ thread_id: string | null }>(
    `WITH gone AS (
       DELETE FROM inbox_messages WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3 AND status = 'draft' RETURNING thread_id
     ),
     emptied AS (
       DELETE FROM threads t USING gone WHERE t.workspace_id = $1 AND t.id = gone.thread_id AND t.folder = 'drafts' AND t.message_count <= 1
       RETURNING t.id
     ),
     counted AS (
       UPDATE threads t SET message_count = greatest(t.message_count - 1, 0), updated_at = now()
       FROM gone WHERE t.workspace_id = $1 AND t.id = gone.thread_id AND NOT EXISTS (SELECT 1 FROM emptied)
     )
     SELECT thread_id FROM gone`,
    { bind: [workspaceId, inboxId, draftId], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/** The fields of a draft a PATCH sets; absent ones stay as they are. */
export interface DraftChanges {
  to?: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  attachments?: InboxAttachment[];
  /** With the subject: the thread's, when the draft is a new conversation's (its thread says what the draft says). */
  normalizedSubject?: string;
  /** The correspondents of the draft's recipients as they now are, for a new conversation's thread. */
  participants?: string[];
}

/**
 * Changes a draft while it is still one (`status = 'draft'`): a draft sent meanwhile is left as sent and
 * answers false. A new conversation's thread (folder `drafts`) takes the draft's subject and correspondents.
 */
export async function updateDraft(db: Sequelize, workspaceId: string, inboxId: string, draftId: string, changes: DraftChanges): Promise<boolean> {
  const set = (key: keyof DraftChanges) => changes[key] !== undefined;
  const rows = await db.query<{ id: string }>(
    `WITH changed AS (
       UPDATE inbox_messages SET
         to_addresses = CASE WHEN $4 THEN $5::text[] ELSE to_addresses END,
         cc_addresses = CASE WHEN $6 THEN $7::text[] ELSE cc_addresses END,
         bcc_addresses = CASE WHEN $8 THEN $9::text[] ELSE bcc_addresses END,
         subject = CASE WHEN $10 THEN $11 ELSE subject END,
         html = CASE WHEN $12 THEN $13 ELSE html END,
         text = CASE WHEN $14 THEN $15 ELSE text END,
         attachments = CASE WHEN $16 THEN $17::jsonb ELSE attachments END,
         updated_at = now()
       WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3 AND status = 'draft'
       RETURNING id, thread_id
     ),
     thread AS (
       UPDATE threads t SET
         subject = CASE WHEN $10 THEN COALESCE($11, '') ELSE t.subject END,
         normalized_subject = CASE WHEN $10 THEN $18 ELSE t.normalized_subject END,
         participants = CASE WHEN $19::text[] IS NULL THEN t.participants ELSE $19::text[] END,
         updated_at = now()
       FROM changed WHERE t.workspace_id = $1 AND t.id = changed.thread_id AND t.folder = 'drafts'
     )
     SELECT id FROM changed`,
    {
      bind: [
        workspaceId, inboxId, draftId,
        set('to'), changes.to ?? [], set('cc'), changes.cc ?? [], set('bcc'), changes.bcc ?? [],
        set('subject'), changes.subject ?? null, set('html'), changes.html ?? null, set('text'), changes.text ?? null,
        set('attachments'), JSON.stringify(changes.attachments ?? []), changes.normalizedSubject ?? '', changes.participants ?? null,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows.length === 1;
}
