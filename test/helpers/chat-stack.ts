import { type EmailStack, startEmailStack } from './email-stack';
import { startTelegramStandIn, type TelegramStandIn } from './telegram-stand-in';
import { startTwilioStandIn, type TwilioStandIn } from './twilio-stand-in';

/** Where the chat stacks' callback and tracking links point (never fetched by the tests). */
export const PUBLIC_BASE_URL = 'https://messaging.example.com';

export interface ChatStack {
  stack: EmailStack;
  twilio: TwilioStandIn;
  telegram: TelegramStandIn;
  close: () => Promise<void>;
}

/**
 * The send path as shipped (email-stack.ts) with its Twilio and Telegram calls going to the stand-ins, so
 * the real `twilio` and `telegraf` clients are what the chat channels' tests drive.
 */
export async function startChatStack(overrides: Record<string, string> = {}): Promise<ChatStack> {
  const twilio = await startTwilioStandIn();
  const telegram = await startTelegramStandIn();
  const closeStandIns = async () => {
    await twilio.close();
    await telegram.close();
  };
  try {
    const stack = await startEmailStack({
      overrides: { TWILIO_API_URL: twilio.url, TELEGRAM_API_URL: telegram.url, PUBLIC_BASE_URL, RATE_LIMIT_PER_SECOND: '1000', ...overrides },
    });
    return {
      stack,
      twilio,
      telegram,
      close: async () => {
        await stack.close();
        await closeStandIns();
      },
    };
  } catch (error) {
    await closeStandIns();
    throw error;
  }
}
