import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Agent inboxes and inbound mail (issue 16).
 *
 * - `inboxes`: one mailbox (`local_part@domain`) of a workspace's domain. The listener answers 550 at RCPT for
 *   any address of an inbound-enabled domain that has no active inbox here, so the unique index on the lower-case
 *   local part is also what makes `Sales@` and `sales@` the same mailbox.
 * - `email_rules`: allow/block rules (decisions.md). `value` is stored lower-case (an address, or a domain
 *   without `@`), so the unique index ends a duplicate rule in the database and the listener compares as stored.
 * - `threads`: a conversation of one inbox. `normalized_subject` and `participants` (the correspondents'
 *   lower-case addresses, the inbox itself excluded) are what subject threading matches on
 *   (core/inbox/threading.ts), after In-Reply-To/References found nothing.
 * - `inbox_messages`: every message of an inbox, both directions. An inbound row in status `received` is the
 *   point of acceptance of the SMTP listener: it is written before the 250 answer, with the raw message already
 *   in the blob store (`raw_blob_key`); the inbound-mail workflow parses it and fills the rest (`processed`).
 *   Rows with `workflow_started_at` null are that workflow's outbox. Drafts are status `draft` rather than a
 *   separate flag, so a row is in exactly one state. `provider_message_id` holds the id SES rewrote our
 *   Message-ID to, so a reply quoting SES's form still threads with what we sent.
 * - `inbox_daily_counters`: the metrics of GET /inboxes/metrics, moved in the transaction of the event they count,
 *   never recomputed by scanning messages.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE inboxes (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      domain_id uuid NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
      local_part text NOT NULL,
      display_name text,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id)
    );
    -- One mailbox per address: two creations of the same address (any case) end here.
    CREATE UNIQUE INDEX inboxes_address_key ON inboxes (domain_id, lower(local_part));
    CREATE INDEX inboxes_workspace_idx ON inboxes (workspace_id, created_at DESC, id DESC);

    CREATE TABLE email_rules (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      action text NOT NULL CHECK (action IN ('allow', 'block')),
      match_type text NOT NULL CHECK (match_type IN ('address', 'domain')),
      value text NOT NULL CHECK (value = lower(value)),
      note text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- The same rule twice is one rule; the listener reads all of a workspace's rules by this index.
    CREATE UNIQUE INDEX email_rules_natural_key ON email_rules (workspace_id, action, match_type, value);

    CREATE TABLE threads (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      inbox_id uuid NOT NULL,
      subject text NOT NULL DEFAULT '',
      normalized_subject text NOT NULL DEFAULT '',
      participants text[] NOT NULL DEFAULT '{}',
      folder text NOT NULL DEFAULT 'inbox' CHECK (folder IN ('inbox', 'sent', 'drafts', 'archived')),
      message_count integer NOT NULL DEFAULT 0,
      unread_count integer NOT NULL DEFAULT 0,
      last_message_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id),
      FOREIGN KEY (workspace_id, inbox_id) REFERENCES inboxes (workspace_id, id) ON DELETE CASCADE
    );
    -- GET /inboxes/:id/threads?folder= pages newest first.
    CREATE INDEX threads_folder_idx ON threads (workspace_id, inbox_id, folder, last_message_at DESC, id DESC);
    -- Subject threading looks for recent threads of the inbox with the same normalized subject.
    CREATE INDEX threads_subject_idx ON threads (inbox_id, normalized_subject, last_message_at DESC);

    CREATE TABLE inbox_messages (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      inbox_id uuid NOT NULL,
      -- Null until the inbound-mail workflow threads it (inbound) or for a draft not yet in a thread.
      thread_id uuid,
      direction text NOT NULL CHECK (direction IN ('in', 'out')),
      status text NOT NULL CHECK (status IN ('received', 'processed', 'draft', 'queued', 'sent', 'delivered', 'bounced', 'failed')),
      message_id_header text,
      provider_message_id text,
      in_reply_to text,
      "references" text[] NOT NULL DEFAULT '{}',
      -- The SMTP envelope of an inbound message: what the sender's server said, which headers may contradict.
      envelope_from text,
      envelope_to text,
      remote_address text,
      from_address text,
      from_name text,
      to_addresses text[] NOT NULL DEFAULT '{}',
      cc_addresses text[] NOT NULL DEFAULT '{}',
      bcc_addresses text[] NOT NULL DEFAULT '{}',
      subject text,
      html text,
      text text,
      reply_text text,
      attachments jsonb NOT NULL DEFAULT '[]',
      raw_blob_key text,
      raw_size integer,
      -- SPF/DKIM/DMARC verdicts of the listener (mailauth), kept as evaluated: spf, dkim, dmarc, each {result, ...}.
      auth jsonb,
      -- The MIME could not be fully parsed: stored and shown as far as it goes, never dropped.
      malformed boolean NOT NULL DEFAULT false,
      -- The outbound message (messages table) that carried an out row.
      message_id uuid,
      read_at timestamptz,
      workflow_started_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id),
      FOREIGN KEY (workspace_id, inbox_id) REFERENCES inboxes (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, thread_id) REFERENCES threads (workspace_id, id) ON DELETE CASCADE
    );
    -- A sender retrying after our 250 was lost delivers the same Message-ID again: one row per inbox.
    CREATE UNIQUE INDEX inbox_messages_inbound_key ON inbox_messages (inbox_id, message_id_header)
      WHERE direction = 'in' AND message_id_header IS NOT NULL;
    -- Threading by In-Reply-To/References looks up earlier messages of the inbox by Message-ID, ours in SES's form too.
    CREATE INDEX inbox_messages_header_idx ON inbox_messages (inbox_id, message_id_header);
    CREATE INDEX inbox_messages_provider_idx ON inbox_messages (inbox_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
    CREATE INDEX inbox_messages_thread_idx ON inbox_messages (workspace_id, thread_id, created_at);
    -- The outbox of the inbound-mail workflow: accepted mail whose workflow is not known to run.
    CREATE INDEX inbox_messages_unstarted_idx ON inbox_messages (created_at) WHERE status = 'received' AND workflow_started_at IS NULL;

    CREATE TABLE inbox_daily_counters (
      workspace_id uuid NOT NULL,
      inbox_id uuid NOT NULL,
      day date NOT NULL,
      received integer NOT NULL DEFAULT 0,
      sent integer NOT NULL DEFAULT 0,
      delivered integer NOT NULL DEFAULT 0,
      bounced integer NOT NULL DEFAULT 0,
      PRIMARY KEY (inbox_id, day),
      FOREIGN KEY (workspace_id, inbox_id) REFERENCES inboxes (workspace_id, id) ON DELETE CASCADE
    );
    -- GET /inboxes/metrics sums a workspace's days in a range.
    CREATE INDEX inbox_daily_counters_workspace_idx ON inbox_daily_counters (workspace_id, day);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE inbox_daily_counters;
    DROP TABLE inbox_messages;
    DROP TABLE threads;
    DROP TABLE email_rules;
    DROP TABLE inboxes;
  `);
};
