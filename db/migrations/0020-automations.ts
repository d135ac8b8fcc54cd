import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Automations (journeys), their immutable versions, enrollments, the events that trigger and steer them,
 * and a workspace's journey settings (docs/journeys.md).
 *
 * - `automations`: the draft being edited lives on the row (`draft`: triggers, goal, graph), with the id it
 *   will be published under (`draft_version_id`, the versionId POST /automations answers). Activation copies
 *   the draft into `automation_versions` and points `current_version_id` at it; new enrollments take it.
 * - `automation_versions`: never updated. `graph` is stored normalized (durations in milliseconds), so the
 *   journey workflow reads it without parsing. `trigger_events` and `listens` are the event names its
 *   triggers and its waits (goal, wait_for_event) react to, so POST /events finds both with one probe.
 * - `enrollments`: one contact's way through one version. The partial unique index is the
 *   one-active-enrollment rule, so two triggers at once end in the database. `(automation_id,
 *   trigger_event_id)` makes an event enroll once however often it is processed (a retry, the sweeper).
 *   `started_at` is set once its workflow is known to run: rows without it are the enrollment outbox.
 * - `contact_events` (0004) gains the idempotency key of POST /events and `processed_at`: an event is
 *   stored first (the point of acceptance), then matched; unprocessed ones are matched by the sweeper.
 * - `messages` gains the automation and journey node of a journey message (links, revenue, the journey
 *   timeline); `enrollment_id` was there from the start.
 * - `journey_settings`: quiet hours, frequency caps and the contact attribute holding a contact's zone. The
 *   workspace's own zone stays `workspaces.timezone` (0015), which campaigns sent at a local time read too.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE automations (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'archived')),
      draft jsonb NOT NULL,
      draft_version_id uuid NOT NULL,
      current_version_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id)
    );
    CREATE INDEX automations_recent_idx ON automations (workspace_id, created_at DESC, id DESC);

    CREATE TABLE automation_versions (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      automation_id uuid NOT NULL,
      version integer NOT NULL,
      triggers jsonb NOT NULL DEFAULT '[]',
      goal jsonb,
      graph jsonb NOT NULL,
      trigger_events text[] NOT NULL DEFAULT '{}',
      listens text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (automation_id, version),
      FOREIGN KEY (workspace_id, automation_id) REFERENCES automations (workspace_id, id) ON DELETE CASCADE
    );

    CREATE TABLE enrollments (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      automation_id uuid NOT NULL,
      version_id uuid NOT NULL REFERENCES automation_versions (id),
      contact_id uuid NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'exited')),
      source text NOT NULL CHECK (source IN ('event', 'list', 'segment', 'contacts')),
      trigger_event_id uuid,
      current_node_id text,
      current_node_type text,
      current_node_label text,
      current_since timestamptz,
      exit_reason text,
      entered_at timestamptz NOT NULL DEFAULT now(),
      exited_at timestamptz,
      started_at timestamptz,
      FOREIGN KEY (workspace_id, automation_id) REFERENCES automations (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX enrollments_one_active_idx ON enrollments (workspace_id, automation_id, contact_id) WHERE status = 'active';
    CREATE UNIQUE INDEX enrollments_trigger_idx ON enrollments (automation_id, trigger_event_id, contact_id) WHERE trigger_event_id IS NOT NULL;
    CREATE INDEX enrollments_automation_idx ON enrollments (workspace_id, automation_id, entered_at DESC, id DESC);
    CREATE INDEX enrollments_contact_idx ON enrollments (workspace_id, contact_id, entered_at DESC);
    CREATE INDEX enrollments_unstarted_idx ON enrollments (entered_at) WHERE started_at IS NULL AND status = 'active';

    ALTER TABLE contact_events
      ADD COLUMN idempotency_key text,
      ADD COLUMN processed_at timestamptz;
    -- Events stored before this migration were never for automations: nothing to match.
    UPDATE contact_events SET processed_at = created_at;
    CREATE UNIQUE INDEX contact_events_key_idx ON contact_events (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE INDEX contact_events_unprocessed_idx ON contact_events (created_at) WHERE processed_at IS NULL;

    ALTER TABLE messages
      ADD COLUMN automation_id uuid,
      ADD COLUMN journey_node_id text;
    CREATE INDEX messages_automation_idx ON messages (workspace_id, automation_id) WHERE automation_id IS NOT NULL;
    -- Frequency caps count a contact's recent marketing messages per channel.
    CREATE INDEX messages_contact_recent_idx ON messages (workspace_id, contact_id, channel, created_at)
      WHERE contact_id IS NOT NULL AND kind <> 'transactional';

    CREATE TABLE journey_settings (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      quiet_hours jsonb,
      frequency_caps jsonb NOT NULL DEFAULT '[]',
      timezone_attribute text NOT NULL DEFAULT 'timezone',
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE journey_settings;
    DROP INDEX messages_contact_recent_idx;
    DROP INDEX messages_automation_idx;
    ALTER TABLE messages DROP COLUMN journey_node_id, DROP COLUMN automation_id;
    DROP INDEX contact_events_unprocessed_idx;
    DROP INDEX contact_events_key_idx;
    ALTER TABLE contact_events DROP COLUMN processed_at, DROP COLUMN idempotency_key;
    DROP TABLE enrollments;
    DROP TABLE automation_versions;
    DROP TABLE automations;
  `);
};
