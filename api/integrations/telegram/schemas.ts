import { z } from 'zod';
import { BOT_TOKEN } from '../../../providers/telegram/bot-api';

export const SaveTelegramIntegrationBody = z
  .object({
    botToken: z
      .string()
      .regex(BOT_TOKEN, 'must be a bot token as BotFather gives it (<bot id>:<secret>)')
      .describe('The bot\'s token; checked with Telegram (getMe), stored encrypted, never shown again'),
  })
  .meta({ id: 'SaveTelegramIntegration' });

export const TelegramIntegrationSchema = z
  .discriminatedUnion('configured', [
    z.object({
      configured: z.literal(true),
      botId: z.int(),
      botUsername: z.string(),
      webhookUrl: z.string().describe('Where Telegram posts the bot\'s updates (registered when saved, under PUBLIC_BASE_URL)'),
    }),
    z.object({ configured: z.literal(false) }),
  ])
  .meta({ id: 'TelegramIntegration' });

export type TelegramIntegrationView = z.infer<typeof TelegramIntegrationSchema>;
