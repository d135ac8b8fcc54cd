import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 32: campaigns on chat channels (docs/campaigns.md "Chat channels").
 *
 * `campaigns.channel`, `fallback_chain`: the preferred channel and the channels tried after it; each contact
 * is sent on the first of them that reaches it when the campaign starts. `content_sid`,
 * `content_variables`: a WhatsApp content template, as POST /messages takes it. `message_chat`: the chat
 * content frozen at send, one entry per chat channel of the campaign (the email content stays in
 * `message_content`). `unreachable_count`: members of the audience no channel of the campaign reaches,
 * counted at the snapshot, so the campaign shows why they got nothing.
 *
 * `campaign_recipients.channel`: the channel chosen for the recipient at the snapshot (`address` is on it).
 * `skip_reason`: set when the recipient's turn came and its message could not go (a WhatsApp free-form
 * message outside the contact's 24-hour window); the partial index counts those without walking the rest.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE campaigns
      ADD COLUMN channel text NOT NULL DEFAULT 'email',
      ADD COLUMN fallback_chain text[] NOT NULL DEFAULT '{}',
      ADD COLUMN content_sid text,
      ADD COLUMN content_variables jsonb,
      ADD COLUMN message_chat jsonb,
      ADD COLUMN unreachable_count integer;
    ALTER TABLE campaign_recipients
      ADD COLUMN channel text NOT NULL DEFAULT 'email',
      ADD COLUMN skip_reason text;
    CREATE INDEX campaign_recipients_skipped_idx ON campaign_recipients (campaign_id, skip_reason) WHERE skip_reason IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX campaign_recipients_skipped_idx;
    ALTER TABLE campaign_recipients DROP COLUMN skip_reason, DROP COLUMN channel;
    ALTER TABLE campaigns DROP COLUMN unreachable_count, DROP COLUMN message_chat, DROP COLUMN content_variables, DROP COLUMN content_sid,
      DROP COLUMN fallback_chain, DROP COLUMN channel;
  `);
};
