import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Telegram (issue 14).
 *
 * - `telegram_integrations`: a workspace's bot, at most one. The token and the webhook's secret token are
 *   sealed with MASTER_KEY; the bot's id and username are public. A bot has one update webhook at
 *   Telegram, so it belongs to one workspace (`bot_id` unique): a second workspace registering it would
 *   silently take the first one's updates.
 * - `telegram_chats`: the chats that wrote to the workspace's bot. A bot can only message a chat that
 *   started it, so this is the list of reachable chats; a later contact link (`/start <token>`) fills in a
 *   contact identity for one of them. The 1-message-per-second-per-chat limit is kept by the send pacer
 *   in Redis, keyed by bot and chat id, not here.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE telegram_integrations (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      bot_token_sealed text NOT NULL,
      bot_id bigint NOT NULL,
      bot_username text NOT NULL,
      -- What setWebhook registered (PUBLIC_BASE_URL may change later; saving again registers the new one).
      webhook_url text NOT NULL,
      -- Telegram sends it back in X-Telegram-Bot-Api-Secret-Token on every update.
      webhook_secret_sealed text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX telegram_integrations_bot_idx ON telegram_integrations (bot_id);

    CREATE TABLE telegram_chats (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      -- Bot API chat ids are up to 52 significant bits (groups negative).
      chat_id bigint NOT NULL,
      -- The bot that last heard from the chat: a new bot cannot write to it until it is started again.
      bot_id bigint NOT NULL,
      chat_type text NOT NULL,
      username text,
      first_name text,
      title text,
      first_inbound_at timestamptz NOT NULL,
      last_inbound_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, chat_id)
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE telegram_chats;
    DROP TABLE telegram_integrations;
  `);
};
