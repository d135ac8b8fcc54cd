import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Why a delivery suppressed an address, in the provider's words (issue 30, docs/messages.md "Permanent chat
 * refusals"). `reason` stays the closed list (hard_bounce, unsubscribed, ...); `detail` keeps what the
 * provider said ("Telegram 403: Forbidden: bot was blocked by the user", "Twilio error 21610") and
 * `message_id` the message whose refusal added it, so the suppression list and the contact can explain it.
 * Both are null for suppressions declared through the API or added before this migration.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE suppressions ADD COLUMN detail text, ADD COLUMN message_id uuid');
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE suppressions DROP COLUMN detail, DROP COLUMN message_id');
};
