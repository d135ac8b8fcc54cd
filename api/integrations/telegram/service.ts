import type { Sequelize } from 'sequelize';
import { AppError } from '../../../core/errors';
import { type Keyring, macKeys, openSecret, sealSecret } from '../../../core/secrets';
import { webhookSecretTokens } from '../../../providers/telegram/updates';
import {
  deleteTelegramIntegration,
  findTelegramIntegration,
  saveTelegramIntegration,
  telegramBotHeldElsewhere,
  type TelegramIntegrationRecord,
} from '../../../db/repositories/telegram';
import { type BotApi, botApiRefusal, deadline } from '../../../providers/telegram/bot-api';

/** How long a request waits for each Bot API call. */
const BOT_API_TIMEOUT_MS = 10_000;

/** The updates the service reads; Telegram sends no others (callback queries, polls, ...). */
const ALLOWED_UPDATES = ['message', 'edited_message'] as const;

export interface TelegramIntegrationServiceDeps {
  db: Sequelize;
  keyring: Keyring;
  publicBaseUrl: string;
  /** A Bot API client for a token (TELEGRAM_API_URL). */
  botApi: (token: string) => BotApi;
}

/** What Telegram answers a token it does not know (revoked: 401; malformed: 404). */
const TOKEN_GONE = [401, 404];

export function telegramWebhookUrl(publicBaseUrl: string, workspaceId: string): string {
  return new URL(`/callbacks/telegram/${workspaceId}`, publicBaseUrl).toString();
}

/**
 * A Bot API call that failed without a refusal: Telegram (or TELEGRAM_API_URL) is down or too slow. The
 * cause stays out of the answer: it names the deployment's Bot API address.
 */
function unreachable(error: unknown): AppError {
  const timedOut = error instanceof Error && error.name === 'AbortError';
  return new AppError('service_unavailable', `The Telegram Bot API ${timedOut ? 'did not answer in time' : 'could not be reached'}; try again later`);
}

export function createTelegramIntegrationService(deps: TelegramIntegrationServiceDeps) {
  const { db } = deps;

  /** The bot behind a token; a token Telegram refuses is the caller's mistake, so a 422 naming it. */
  async function identify(api: BotApi) {
    try {
      return await api.callApi('getMe', {}, deadline(BOT_API_TIMEOUT_MS));
    } catch (error) {
      const refusal = botApiRefusal(error);
      if (!refusal) throw unreachable(error);
      throw AppError.validation({ formErrors: [], fieldErrors: { botToken: [`Telegram refused the token: ${refusal.description}`] } });
    }
  }

  return {
    get: (workspaceId: string) => findTelegramIntegration(db, workspaceId),

    /**
     * Checks the token with Telegram, registers the workspace's update webhook with a new secret token, and
     * stores both sealed. The webhook is registered before the row is written, so a stored integration
     * always has a registered webhook; a repeat save replaces both.
     */
    async save(workspaceId: string, input: { botToken: string }): Promise<TelegramIntegrationRecord> {
      const api = deps.botApi(input.botToken);
      const bot = await identify(api);
      const botId = String(bot.id);
      const conflict = () => new AppError('conflict', `The bot @${bot.username} is connected to another workspace; a bot has one update webhook, so one workspace`);
      // Checked before setWebhook, so saving another workspace's bot does not take its updates away (two
      // workspaces saving one bot at the same instant can still race here; the unique index keeps one row).
      if (await telegramBotHeldElsewhere(db, workspaceId, botId)) throw conflict();

      const webhookUrl = telegramWebhookUrl(deps.publicBaseUrl, workspaceId);
      const secretToken = webhookSecretTokens(macKeys(deps.keyring)).generate(workspaceId);
      try {
        await api.callApi('setWebhook', { url: webhookUrl, secret_token: secretToken, allowed_updates: [...ALLOWED_UPDATES] }, deadline(BOT_API_TIMEOUT_MS));
      } catch (error) {
        const refusal = botApiRefusal(error);
        if (!refusal) throw unreachable(error);
        // Telegram only posts to public https URLs on ports 443, 80, 88 and 8443: PUBLIC_BASE_URL must be one.
        throw AppError.validation({ formErrors: [`Telegram refused the update webhook ${webhookUrl}: ${refusal.description}`], fieldErrors: {} });
      }
      const saved = await saveTelegramIntegration(db, workspaceId, {
        botId,
        botUsername: bot.username,
        botTokenSealed: sealSecret(deps.keyring, { workspaceId, column: 'telegram_integrations.bot_token' }, input.botToken),
        webhookUrl,
        webhookSecretSealed: sealSecret(deps.keyring, { workspaceId, column: 'telegram_integrations.webhook_secret' }, secretToken),
      });
      if (saved === 'bot-taken') throw conflict();
      return saved;
    },

    /**
     * Unregisters the update webhook, then forgets the bot. A token Telegram now refuses (revoked in
     * BotFather) has no webhook left to remove, so the integration goes all the same.
     */
    async remove(workspaceId: string): Promise<void> {
      const integration = await findTelegramIntegration(db, workspaceId);
      if (!integration) throw AppError.notFound('Telegram integration');
      try {
        await deps.botApi(openSecret(deps.keyring, { workspaceId, column: 'telegram_integrations.bot_token' }, integration.botTokenSealed)).callApi('deleteWebhook', {}, deadline(BOT_API_TIMEOUT_MS));
      } catch (error) {
        const refusal = botApiRefusal(error);
        if (!refusal || !TOKEN_GONE.includes(refusal.code)) throw unreachable(error);
      }
      await deleteTelegramIntegration(db, workspaceId);
    },
  };
}

export type TelegramIntegrationService = ReturnType<typeof createTelegramIntegrationService>;
