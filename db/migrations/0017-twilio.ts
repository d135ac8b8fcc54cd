import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * WhatsApp through Twilio (README.md, "WhatsApp through Twilio").
 *
 * - `twilio_integrations`: one per workspace; the auth token sealed with MASTER_KEY (core/secrets.ts). The
 *   account SID is not secret (it is in every callback Twilio sends), so it stays readable.
 * - `whatsapp_sessions`: WhatsApp's 24-hour customer-service window, one row per workspace and customer
 *   phone: free-form text may be sent only until 24 hours after the customer's last message to us. The
 *   primary key is the natural key, so two inbound messages at once end in one row, in the database.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE twilio_integrations (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      account_sid text NOT NULL,
      auth_token_sealed text NOT NULL,
      whatsapp_from text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE whatsapp_sessions (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      phone text NOT NULL,
      last_inbound_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, phone)
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE whatsapp_sessions;
    DROP TABLE twilio_integrations;
  `);
};
