import express, { type Router } from 'express';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { type Keyring, macKeys, openSecret } from '../../core/secrets';
import { inboundChatOf, secretTokenMatches } from '../../core/telegram-updates';
import { insertPlatformEventOnce } from '../../db/repositories/platform-events';
import { findTelegramIntegration, linkTelegramIdentity, recordInboundChat } from '../../db/repositories/telegram';
import { startToken, telegramLinkTokens } from '../../core/telegram-link-token';

export interface TelegramCallbackDeps {
  db: Sequelize;
  keyring: Keyring;
}

const WorkspaceId = z.uuid();

/**
 * `POST /callbacks/telegram/:workspaceId`: the updates of a workspace's bot, registered by
 * `PUT /integrations/telegram` with a secret token that Telegram sends back in
 * X-Telegram-Bot-Api-Secret-Token. Anyone can post to this URL, so nothing is believed before that token
 * matches; an unknown workspace is refused the same way, so the answer tells nothing about who has a bot.
 * The chat is recorded before the 200: Telegram retries an update that was not answered 2xx, so a
 * failure to record it is retried rather than lost.
 */
export function telegramCallbackRoutes(app: Router, deps: TelegramCallbackDeps): void {
  const linkTokens = telegramLinkTokens(macKeys(deps.keyring));
  app.post('/callbacks/telegram/:workspaceId', express.json({ limit: '256kb' }), async (req, res) => {
    const workspaceId = WorkspaceId.safeParse(req.params.workspaceId);
    const integration = workspaceId.success ? await findTelegramIntegration(deps.db, workspaceId.data) : null;
    const given = req.header('x-telegram-bot-api-secret-token');
    if (!integration || !secretTokenMatches(openSecret(deps.keyring, { workspaceId: integration.workspaceId, column: 'telegram_integrations.webhook_secret' }, integration.webhookSecretSealed), given)) {
      throw new AppError('forbidden', 'The update does not carry this workspace\'s secret token', { need: 'X-Telegram-Bot-Api-Secret-Token' });
    }
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
