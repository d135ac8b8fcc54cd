import { ErrorSchema } from '../../http/openapi';
import { ok, type RouteTable } from '../../http/route';
import { SaveTelegramIntegrationBody, TelegramIntegrationSchema } from './schemas';
import type { TelegramIntegrationService } from './service';
import { telegramIntegrationView } from './views';

export function telegramIntegrationRoutes(routes: RouteTable, telegram: TelegramIntegrationService): void {
  routes.put('/integrations/telegram', 'integrations:write', {
    summary: 'Connect the workspace\'s Telegram bot: checks the token, registers the update webhook, stores the token encrypted',
    body: SaveTelegramIntegrationBody,
    responses: {
      200: { description: 'Connected (the token is never shown again)', schema: TelegramIntegrationSchema },
      409: { description: 'The bot is connected to another workspace' },
      422: { description: 'Telegram refused the token (botToken), or refused the update webhook under PUBLIC_BASE_URL' },
      503: {
        description: 'service_unavailable: the Telegram Bot API could not be reached or did not answer in time; nothing is stored, try again later',
        schema: ErrorSchema,
      },
    },
    handle: async ({ principal, body }) => ok(telegramIntegrationView(await telegram.save(principal.workspaceId, body))),
  });

  routes.get('/integrations/telegram', 'integrations:write', {
    summary: 'The workspace\'s Telegram bot, without its token',
    responses: { 200: { description: 'The bot, or { configured: false }', schema: TelegramIntegrationSchema } },
    handle: async ({ principal }) => ok(telegramIntegrationView(await telegram.get(principal.workspaceId))),
  });

  routes.delete('/integrations/telegram', 'integrations:write', {
    summary: 'Disconnect the bot: unregisters its update webhook and forgets its token',
    responses: {
      200: { description: 'Disconnected', schema: TelegramIntegrationSchema },
      404: { description: 'No Telegram bot is connected' },
      503: { description: 'The Telegram Bot API could not be reached; the bot stays connected' },
    },
    handle: async ({ principal }) => {
      await telegram.remove(principal.workspaceId);
      return ok(telegramIntegrationView(null));
    },
  });
}
