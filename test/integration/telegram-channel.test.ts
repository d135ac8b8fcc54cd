import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { PermanentSendError, ProviderUnavailableError, RecipientRefusedError } from '../../core/delivery';
import { createTelegramChannel, type TelegramChannel } from '../../providers/telegram/send';
import { configKeyring, loadConfig } from '../../core/config';
import { sealSecret } from '../../core/secrets';
import { botApi } from '../../providers/telegram/bot-api';
import { type StandInBot, startTelegramStandIn, type TelegramStandIn } from '../helpers/telegram-stand-in';

const keyring = configKeyring(loadConfig(process.env));
const workspaceId = randomUUID();
const sealed = (token: string) => ({ workspaceId, botTokenSealed: sealSecret(keyring, { workspaceId, column: 'telegram_integrations.bot_token' }, token) });
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.4 an invoice');

describe('the Telegram channel', () => {
  let telegram: TelegramStandIn;
  let channel: TelegramChannel;
  let bot: StandInBot;
  let integration: ReturnType<typeof sealed>;
  beforeAll(async () => {
    telegram = await startTelegramStandIn();
    channel = createTelegramChannel({ keyring, botApi: (token) => botApi(telegram.url, token) });
    bot = telegram.addBot();
    integration = sealed(bot.token);
  });
  afterAll(() => telegram.close());

  const callsSince = (count: number) => telegram.requests.slice(count);

  it('a text with a document and a photo: sendMessage with the text escaped, then the bytes by sendDocument and sendPhoto', async () => {
    const before = telegram.requests.length;
    const receipt = await channel.send(integration, {
      chatId: '-1001234567890',
      text: 'Hi <b>Ann</b> & "co" <a href="https://evil.example">click</a>',
      attachments: [
        { filename: 'invoice "May".pdf', contentType: 'application/pdf', content: PDF },
        { filename: 'logo.png', contentType: 'image/png', content: PNG },
      ],
    });

    const calls = callsSince(before);
    expect(calls.map((call) => [call.method, call.token])).toEqual([
      ['sendMessage', bot.token],
      ['sendDocument', bot.token],
      ['sendPhoto', bot.token],
    ]);
    expect(calls[0].params).toEqual({
      chat_id: '-1001234567890',
      text: 'Hi &lt;b&gt;Ann&lt;/b&gt; &amp; "co" &lt;a href="https://evil.example"&gt;click&lt;/a&gt;',
      parse_mode: 'HTML',
    });
    expect(calls[1].params).toMatchObject({ chat_id: '-1001234567890' });
    expect(calls[1].files.document).toEqual({ filename: 'invoice _May_.pdf', content: PDF });
    expect(calls[2].params).toMatchObject({ chat_id: '-1001234567890' });
    expect(calls[2].files.photo).toEqual({ filename: 'logo.png', content: PNG });
    expect(receipt).toEqual({ provider: 'telegram', providerMessageId: expect.stringMatching(/^-1001234567890:\d+$/) });
  });

  it('an image Telegram does not take as a photo goes as a document; no text sends only the attachment', async () => {
    const before = telegram.requests.length;
    const gif = Buffer.from('GIF89a');
    const receipt = await channel.send(integration, { chatId: '42', attachments: [{ filename: 'a.gif', contentType: 'image/gif', content: gif }] });
    const calls = callsSince(before);
    expect(calls.map((call) => call.method)).toEqual(['sendDocument']);
    expect(calls[0].files.document.content).toEqual(gif);
    expect(receipt.providerMessageId).toMatch(/^42:\d+$/);
  });

  it('a 429 is the bot\'s route throttled, and the message waits exactly the retry_after Telegram names', async () => {
    telegram.refuseNext('sendMessage', { errorCode: 429, description: 'Too Many Requests: retry after 7', retryAfter: 7 });
    const failure = await channel.send(integration, { chatId: '42', text: 'hello', attachments: [] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderUnavailableError);
    expect(failure).toMatchObject({ retryAfterMs: 7_000 });
  });

  it('a bot blocked by the user (403) or a chat not found (400) is a permanent failure that names the chat to suppress, in Telegram\'s words', async () => {
    telegram.refuseNext('sendMessage', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    const blocked = await channel.send(integration, { chatId: '42', text: 'hello', attachments: [] }).catch((error: unknown) => error);
    expect(blocked).toBeInstanceOf(RecipientRefusedError);
    expect(blocked).toMatchObject({ name: 'PermanentSendError', suppress: 'unsubscribed', detail: 'Telegram 403: Forbidden: bot was blocked by the user' });
    expect((blocked as Error).message).toMatch(/^Telegram 403: Forbidden: bot was blocked by the user \(the user blocked the bot\)/);
    telegram.refuseNext('sendPhoto', { errorCode: 400, description: 'Bad Request: chat not found' });
    const failure = channel.send(integration, { chatId: '43', attachments: [{ filename: 'logo.png', contentType: 'image/png', content: PNG }] });
    await expect(failure).rejects.toMatchObject({ suppress: 'hard_bounce', detail: 'Telegram 400: Bad Request: chat not found' });
    await expect(failure).rejects.toThrow('chat not found');
  });

  it('a refusal that is the message\'s own (400 message is too long) fails it without naming anyone to suppress', async () => {
    telegram.refuseNext('sendMessage', { errorCode: 400, description: 'Bad Request: message is too long' });
    const failure = await channel.send(integration, { chatId: '42', text: 'hello', attachments: [] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PermanentSendError);
    expect(failure).not.toBeInstanceOf(RecipientRefusedError);
  });

  it('a token Telegram no longer knows (revoked) is a permanent failure; an unreachable Bot API is a retryable one', async () => {
    const revoked = sealed(`${bot.id}:revokedrevokedrevokedrevoked`);
    const refused = await channel.send(revoked, { chatId: '42', text: 'hello', attachments: [] }).catch((error: unknown) => error);
    // The bot's failure, not the chat's: nobody is suppressed for it.
    expect(refused).toBeInstanceOf(PermanentSendError);
    expect(refused).not.toBeInstanceOf(RecipientRefusedError);
    expect((refused as Error).message).toMatch(/^Telegram 401: Unauthorized \(the bot token was refused/);

    const down = createTelegramChannel({ keyring, botApi: (token) => botApi('http://127.0.0.1:1/', token) });
    const failure = await down.send(integration, { chatId: '42', text: 'hello', attachments: [] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(PermanentSendError);
    expect(failure).not.toBeInstanceOf(ApplicationFailure);
  });
});
