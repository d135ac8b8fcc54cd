import { writeFileSync } from 'node:fs';
import { startTelegramStandIn } from './telegram-stand-in';
import { startTwilioStandIn } from './twilio-stand-in';

/**
 * The Telegram Bot API and Twilio stand-ins as a process of their own, for runs that start the API as a
 * process (the contract suite): `tsx test/helpers/provider-stand-ins-main.ts <file>` writes
 * `TELEGRAM_API_URL=...` and `TWILIO_API_URL=...` lines to <file> once both listen, and runs until SIGTERM.
 * Both accept any well-formed credentials: a generated token or account is a valid one, so the suite
 * reaches the integrations' accepted path; refusals by the provider are tested in test/integration.
 */
async function main(): Promise<void> {
  const target = process.argv[2];
  if (!target) throw new Error('usage: provider-stand-ins-main.ts <file to write the URLs to>');
  const telegram = await startTelegramStandIn({ anyToken: true });
  const twilio = await startTwilioStandIn({ anyAccount: true });
  // The recorded requests are for tests that read them; a long run would only accumulate them.
  setInterval(() => {
    telegram.requests.length = 0;
    twilio.requests.length = 0;
  }, 10_000).unref();
  writeFileSync(target, `TELEGRAM_API_URL=${telegram.url}\nTWILIO_API_URL=${twilio.url}\n`);
  const stop = () => {
    void Promise.all([telegram.close(), twilio.close()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
