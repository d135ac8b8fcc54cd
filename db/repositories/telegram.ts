import { QueryTypes, type Sequelize, UniqueConstraintError } from 'sequelize';
import type { InboundChat } from '../../core/delivery';

/** A workspace's bot. The token and the webhook's secret token stay sealed; the API never shows either. */
export interface TelegramIntegrationRecord {
  workspaceId: string;
  botId: string;
  botUsername: string;
  botTokenSealed: string;
  webhookUrl: string;
  webhookSecretSealed: string;
  createdAt: Date;
  updatedAt: Date;
}

interface IntegrationRow {
  workspace_id: string;
  bot_id: string;
  bot_username: string;
  bot_token_sealed: string;
  webhook_url: string;
  webhook_secret_sealed: string;
  created_at: Date;
  updated_at: Date;
}

const INTEGRATION_COLUMNS = 'workspace_id, bot_id, bot_username, bot_token_sealed, webhook_url, webhook_secret_sealed, created_at, updated_at';

const toIntegration = (row: IntegrationRow): TelegramIntegrationRecord => ({
  workspaceId: row.workspace_id,
  // bigint arrives as a string, which keeps every 64-bit id exact.
  botId: String(row.bot_id),
  botUsername: row.bot_username,
  botTokenSealed: row.bot_token_sealed,
  webhookUrl: row.webhook_url,
  webhookSecretSealed: row.webhook_secret_sealed,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface TelegramIntegrationInput {
  botId: string;
  botUsername: string;
  botTokenSealed: string;
  webhookUrl: string;
  webhookSecretSealed: string;
}

export async function findTelegramIntegration(db: Sequelize, workspaceId: string): Promise<TelegramIntegrationRecord | null> {
  const rows = await db.query<IntegrationRow>(`SELECT ${INTEGRATION_COLUMNS} FROM telegram_integrations WHERE workspace_id = $1`, {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toIntegration(rows[0]) : null;
}

/**
 * Every workspace's sealed webhook secret, across workspaces: the callback route reads them (rarely) to
 * learn which workspaces still hold a version 1 secret, whose updates cannot be checked before a read.
 */
export async function listTelegramWebhookSecrets(db: Sequelize): Promise<Array<{ workspaceId: string; webhookSecretSealed: string }>> {
  const rows = await db.query<{ workspace_id: string; webhook_secret_sealed: string }>(
    'SELECT workspace_id, webhook_secret_sealed FROM telegram_integrations',
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, webhookSecretSealed: row.webhook_secret_sealed }));
}

/** Whether another workspace holds this bot (a bot has one webhook, so one workspace). */
export async function telegramBotHeldElsewhere(db: Sequelize, workspaceId: string, botId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM telegram_integrations WHERE bot_id = $1 AND workspace_id <> $2', {
    bind: [botId, workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/**
 * Creates or replaces the workspace's bot. 'bot-taken' when another workspace holds the same bot: the
 * unique index decides a race between two workspaces saving it at once.
 */
export async function saveTelegramIntegration(
  db: Sequelize,
  workspaceId: string,
  input: TelegramIntegrationInput,
): Promise<TelegramIntegrationRecord | 'bot-taken'> {
  try {
    const rows = await db.query<IntegrationRow>(
      `INSERT INTO telegram_integrations (workspace_id, bot_id, bot_username, bot_token_sealed, webhook_url, webhook_secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (workspace_id) DO UPDATE SET
         bot_id = EXCLUDED.bot_id,
         bot_username = EXCLUDED.bot_username,
         bot_token_sealed = EXCLUDED.bot_token_sealed,
         webhook_url = EXCLUDED.webhook_url,
         webhook_secret_sealed = EXCLUDED.webhook_secret_sealed,
         updated_at = now()
       RETURNING ${INTEGRATION_COLUMNS}`,
      { bind: [workspaceId, input.botId, input.botUsername, input.botTokenSealed, input.webhookUrl, input.webhookSecretSealed], type: QueryTypes.SELECT },
    );
    return toIntegration(rows[0]);
  } catch (error) {
    if (error instanceof UniqueConstraintError && (error.parent as { constraint?: string }).constraint === 'telegram_integrations_bot_idx') return 'bot-taken';
    throw error;
  }
}

export async function deleteTelegramIntegration(db: Sequelize, workspaceId: string): Promise<TelegramIntegrationRecord | null> {
  const rows = await db.query<IntegrationRow>(`DELETE FROM telegram_integrations WHERE workspace_id = $1 RETURNING ${INTEGRATION_COLUMNS}`, {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toIntegration(rows[0]) : null;
}

/** A chat that wrote to the workspace's bot. */
export interface TelegramChatRecord {
  chatId: string;
  botId: string;
  chatType: string;
  username: string | null;
  firstName: string | null;
  title: string | null;
  firstInboundAt: Date;
  lastInboundAt: Date;
}

interface ChatRow {
  chat_id: string;
  bot_id: string;
  chat_type: string;
  username: string | null;
  first_name: string | null;
  title: string | null;
  first_inbound_at: Date;
  last_inbound_at: Date;
}

/**
 * Records a chat's inbound message. Telegram retries undelivered updates and may deliver them out of
 * order, so the last inbound time only moves forward, and the names are those of the latest message.
 */
export async function recordInboundChat(db: Sequelize, workspaceId: string, botId: string, chat: InboundChat): Promise<void> {
  await db.query(
    `INSERT INTO telegram_chats (workspace_id, chat_id, bot_id, chat_type, username, first_name, title, first_inbound_at, last_inbound_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (workspace_id, chat_id) DO UPDATE SET
       bot_id = CASE WHEN EXCLUDED.last_inbound_at >= telegram_chats.last_inbound_at THEN EXCLUDED.bot_id ELSE telegram_chats.bot_id END,
       chat_type = CASE WHEN EXCLUDED.last_inbound_at >= telegram_chats.last_inbound_at THEN EXCLUDED.chat_type ELSE telegram_chats.chat_type END,
       username = CASE WHEN EXCLUDED.last_inbound_at >= telegram_chats.last_inbound_at THEN EXCLUDED.username ELSE telegram_chats.username END,
       first_name = CASE WHEN EXCLUDED.last_inbound_at >= telegram_chats.last_inbound_at THEN EXCLUDED.first_name ELSE telegram_chats.first_name END,
       title = CASE WHEN EXCLUDED.last_inbound_at >= telegram_chats.last_inbound_at THEN EXCLUDED.title ELSE telegram_chats.title END,
       first_inbound_at = LEAST(telegram_chats.first_inbound_at, EXCLUDED.first_inbound_at),
       last_inbound_at = GREATEST(telegram_chats.last_inbound_at, EXCLUDED.last_inbound_at)`,
    { bind: [workspaceId, chat.chatId, botId, chat.chatType, chat.username, chat.firstName, chat.title, chat.at] },
  );
}

export async function findTelegramChat(db: Sequelize, workspaceId: string, chatId: string): Promise<TelegramChatRecord | null> {
  const rows = await db.query<ChatRow>(
    `SELECT chat_id, bot_id, chat_type, username, first_name, title, first_inbound_at, last_inbound_at
     FROM telegram_chats WHERE workspace_id = $1 AND chat_id = $2`,
    { bind: [workspaceId, chatId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    chatId: String(row.chat_id),
    botId: String(row.bot_id),
    chatType: row.chat_type,
    username: row.username,
    firstName: row.first_name,
    title: row.title,
    firstInboundAt: row.first_inbound_at,
    lastInboundAt: row.last_inbound_at,
  };
}

/**
 * Ties a chat to a contact after a valid `/start <token>` (core/telegram-link-token.ts): the contact's
 * Telegram identity for that chat, verified and opted in (the person pressed Start), primary when the
 * contact has no primary Telegram identity yet. A chat that is already another contact's identity stays
 * theirs (answered false): one address has one owner, and a link shared by mistake must not move it.
 */
export async function linkTelegramIdentity(db: Sequelize, workspaceId: string, contactId: string, chatId: string): Promise<boolean> {
  const rows = await db.query<{ contact_id: string }>(
    `INSERT INTO contact_identities (workspace_id, contact_id, channel, address, consent, verified, is_primary)
     SELECT $1, c.id, 'telegram', $3, 'opted_in', true,
       NOT EXISTS (SELECT 1 FROM contact_identities p WHERE p.contact_id = c.id AND p.channel = 'telegram' AND p.is_primary)
     FROM contacts c WHERE c.workspace_id = $1 AND c.id = $2
     ON CONFLICT (workspace_id, channel, address) DO UPDATE SET consent = 'opted_in', verified = true, updated_at = now()
       WHERE contact_identities.contact_id = EXCLUDED.contact_id
     RETURNING contact_id`,
    { bind: [workspaceId, contactId, chatId], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}
