import type { TelegramIntegrationRecord } from '../../../db/repositories/telegram';
import type { TelegramIntegrationView } from './schemas';

/** Never the token nor the webhook's secret token: only what identifies the bot. */
export function telegramIntegrationView(integration: TelegramIntegrationRecord | null): TelegramIntegrationView {
  if (!integration) return { configured: false };
  // Telegram guarantees bot ids fit in 52 bits, so a JSON number carries them exactly.
  return { configured: true, botId: Number(integration.botId), botUsername: integration.botUsername, webhookUrl: integration.webhookUrl };
}
