import express, { type Router } from 'express';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { type Keyring, macKeys, openSecret } from '../../core/secrets';
import { inboundChatOf, secretTokenMatches, type WebhookSecretTokens, webhookSecretTokens } from '../../providers/telegram/updates';
import { insertPlatformEventOnce } from '../../db/repositories/platform-events';
import { findTelegramIntegration, linkTelegramIdentity, listTelegramWebhookSecrets, recordInboundChat } from '../../db/repositories/telegram';
import { startToken, telegramLinkTokens } from '../../core/telegram-link-token';

export interface TelegramCallbackDeps {
  db: Sequelize;
  keyring: Keyring;
}

const WorkspaceId = z.uuid();

/** Where a workspace's webhook secret is sealed (its associated data: core/secrets.ts). */
const WEBHOOK_SECRET_PLACE = (workspaceId: string) => ({ workspaceId, column: 'telegram_integrations.webhook_secret' as const });

/** How long the list of workspaces still holding a version 1 secret is trusted (it only shrinks, by re-saving). */
const LEGACY_REFRESH_MS = 10 * 60_000;

/**
 * The workspaces whose stored webhook secret is version 1, read at most every LEGACY_REFRESH_MS. No new
 * version 1 secret is ever made, so the list can only be too long (a re-save elsewhere), which costs a
 * read, never too short; only a replica of an older version saving during a rolling upgrade adds one, and
 * the next refresh finds it.
 */
function legacySecretHolders(deps: TelegramCallbackDeps, secrets: WebhookSecretTokens): () => Promise<Set<string>> {
  let loaded: { at: number; holders: Promise<Set<string>> } | null = null;
  return () => {
    if (!loaded || Date.now() - loaded.at > LEGACY_REFRESH_MS) {
      const holders = listTelegramWebhookSecrets(deps.db).then(
        (rows) => new Set(rows.filter((row) => isLegacySecret(deps, secrets, row)).map((row) => row.workspaceId)),
      );
      // A failed read is tried again by the next update rather than remembered.
      holders.catch(() => (loaded = null));
      loaded = { at: Date.now(), holders };
    }
    return loaded.holders;
  };
}

/**
 * Whether a workspace's stored secret is version 1. One that opens under no key of the ring (sealed under a
 * key since dropped, or moved from another row) cannot be checked either way: it is left out, so one bad row
 * never fails the updates of every other workspace.
 */
function isLegacySecret(deps: TelegramCallbackDeps, secrets: WebhookSecretTokens, row: { workspaceId: string; webhookSecretSealed: string }): boolean {
  try {
    return secrets.check(row.workspaceId, openSecret(deps.keyring, WEBHOOK_SECRET_PLACE(row.workspaceId), row.webhookSecretSealed)) !== 'signed';
  } catch {
    return false;
  }
}

/**
 * `POST /callbacks/telegram/:workspaceId`: the updates of a workspace's bot, registered by
 * `PUT /integrations/telegram` with a secret token that Telegram sends back in
 * X-Telegram-Bot-Api-Secret-Token. Anyone can post to this URL, so nothing is believed before that token
 * matches; an unknown workspace is refused the same way, so the answer tells nothing about who has a bot.
 * A made-up token is refused before anything is read (providers/telegram/updates.ts, webhookSecretTokens).
 * The chat is recorded before the 200: Telegram retries an update that was not answered 2xx, so a
 * failure to record it is retried rather than lost.
 */
export function telegramCallbackRoutes(app: Router, deps: TelegramCallbackDeps): void {
  const linkTokens = telegramLinkTokens(macKeys(deps.keyring));
  const secrets = webhookSecretTokens(macKeys(deps.keyring));
  const legacyHolders = legacySecretHolders(deps, secrets);
  const refuse = () => new AppError('forbidden', 'The update does not carry this workspace\'s secret token', { need: 'X-Telegram-Bot-Api-Secret-Token' });
  app.post('/callbacks/telegram/:workspaceId', express.json({ limit: '256kb' }), async (req, res) => {
    const workspaceId = WorkspaceId.safeParse(req.params.workspaceId);
    const given = req.header('x-telegram-bot-api-secret-token');
    // A version 2 token proves itself; an unsigned one is worth a read only for a workspace with a version 1 secret.
    const claim = workspaceId.success ? secrets.check(workspaceId.data, given) : 'forged';
    if (!workspaceId.success || claim === 'forged' || (claim === 'unsigned' && !(await legacyHolders()).has(workspaceId.data))) throw refuse();
    const integration = await findTelegramIntegration(deps.db, workspaceId.data);
    if (!integration || !secretTokenMatches(openSecret(deps.keyring, WEBHOOK_SECRET_PLACE(integration.workspaceId), integration.webhookSecretSealed), given)) throw refuse();
    const chat = inboundChatOf(req.body);
    if (chat) {
      await recordInboundChat(deps.db, integration.workspaceId, integration.botId, chat);
      // `/start <token>` from a private chat: the person opened the contact's deep link and pressed Start.
      const token = chat.chatType === 'private' && !chat.edited ? startToken(chat.text) : null;
      const contactId = token ? linkTokens.read(integration.workspaceId, token, new Date()) : null;
      if (contactId) {
        const linked = await linkTelegramIdentity(deps.db, integration.workspaceId, contactId, chat.chatId);
        req.log.info({ workspaceId: integration.workspaceId, contactId, linked }, 'Telegram /start link');
      }
      // An edit is not a new message from the customer.
      if (!chat.edited) {
        const providerMessageId = `${chat.chatId}:${chat.messageId}`;
        await insertPlatformEventOnce(
          deps.db,
          integration.workspaceId,
          { type: 'message.received', data: { channel: 'telegram', from: chat.chatId, text: chat.text, username: chat.username, providerMessageId } },
          providerMessageId,
        );
      }
    }
    res.status(200).json({ ok: true });
  });
}
