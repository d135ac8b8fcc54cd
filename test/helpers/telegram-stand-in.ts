import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A file a Bot API call uploaded (multipart), as the stand-in received it. */
export interface UploadedFile {
  filename: string;
  content: Buffer;
}

/** One Bot API call: the method, the bot's token, the scalar parameters and any uploaded files. */
export interface BotApiRequest {
  method: string;
  token: string;
  params: Record<string, unknown>;
  files: Record<string, UploadedFile>;
  /** When the stand-in received it (epoch ms): what per-chat pacing is judged by. */
  at: number;
}

/** A refusal the stand-in answers instead of a result, in the Bot API's error shape. */
export interface BotApiRefusal {
  errorCode: number;
  description: string;
  retryAfter?: number;
}

export interface StandInBot {
  token: string;
  id: number;
  username: string;
  /** What the last setWebhook registered (null before it, or after deleteWebhook). */
  webhook: { url: string; secretToken: string | undefined } | null;
}

export interface TelegramStandIn {
  /** The Bot API root to give as TELEGRAM_API_URL. */
  url: string;
  requests: BotApiRequest[];
  /** Makes a bot whose token the stand-in accepts; every other token is refused with 401, as Telegram does. */
  addBot: (username?: string) => StandInBot;
  /** The next call of `method` (by any bot) is answered with this refusal instead of its result. */
  refuseNext: (method: string, refusal: BotApiRefusal) => void;
  /**
   * Posts an update to the bot's registered webhook as Telegram does, with its registered secret token
   * (or `secretToken` when given). `apiUrl` replaces the registered URL's origin: the service under test
   * listens on an ephemeral port that PUBLIC_BASE_URL cannot know in advance.
   */
  deliverUpdate: (bot: StandInBot, update: unknown, options: { apiUrl: string; secretToken?: string }) => Promise<number>;
  close: () => Promise<void>;
}

const UPLOAD_FIELDS = ['photo', 'document'];

async function readBody(req: IncomingMessage): Promise<{ params: Record<string, unknown>; files: Record<string, UploadedFile> }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const contentType = req.headers['content-type'] ?? '';
  if (contentType.startsWith('multipart/form-data')) {
    // Node's own multipart parser (undici), so the stand-in reads exactly what telegraf wrote on the wire.
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    const params: Record<string, unknown> = {};
    const files: Record<string, UploadedFile> = {};
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') params[name] = value;
      else files[name] = { filename: value.name, content: Buffer.from(await value.arrayBuffer()) };
    }
    return { params, files };
  }
  return { params: body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {}, files: {} };
}

/**
 * A local Telegram Bot API: `/bot<token>/<method>` for the methods the service calls (getMe, setWebhook,
 * deleteWebhook, sendMessage, sendDocument, sendPhoto), JSON or multipart, every call recorded. It
 * refuses unknown tokens and answers refusals on demand; it enforces nothing else (no rate limits, no
 * chat checks), so a test states every refusal it expects.
 */
export interface TelegramStandInOptions {
  /**
   * Answer every well-formed token as a bot of its own (id from the token, as Telegram's tokens carry it)
   * rather than refusing unknown ones: the contract suite generates tokens and needs the accepted path.
   */
  anyToken?: boolean;
}

export async function startTelegramStandIn(options: TelegramStandInOptions = {}): Promise<TelegramStandIn> {
  const bots = new Map<string, StandInBot>();
  const requests: BotApiRequest[] = [];
  const refusals = new Map<string, BotApiRefusal[]>();
  // Bot ids are unique across workspaces, and test databases outlive a run: start each stand-in far from the last.
  let nextBotId = randomInt(1_000_000_000, 2 ** 47);
  let nextMessageId = 1;

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, refusal: BotApiRefusal) =>
    answer(res, refusal.errorCode, {
      ok: false,
      error_code: refusal.errorCode,
      description: refusal.description,
      ...(refusal.retryAfter === undefined ? {} : { parameters: { retry_after: refusal.retryAfter } }),
    });

  function result(bot: StandInBot, method: string, params: Record<string, unknown>, files: Record<string, UploadedFile>): unknown {
    const message = () => ({ message_id: nextMessageId++, date: Math.floor(Date.now() / 1000), chat: { id: Number(params.chat_id), type: 'private' } });
    switch (method) {
      case 'getMe':
        return { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
      case 'setWebhook':
        bot.webhook = { url: String(params.url), secretToken: params.secret_token === undefined ? undefined : String(params.secret_token) };
        return true;
      case 'deleteWebhook':
        bot.webhook = null;
        return true;
      case 'sendMessage':
        return { ...message(), text: params.text };
      case 'sendDocument':
      case 'sendPhoto': {
        const field = UPLOAD_FIELDS.find((name) => files[name]);
        return { ...message(), caption: params.caption, [method === 'sendPhoto' ? 'photo' : 'document']: field ? { file_name: files[field].filename, file_size: files[field].content.length } : undefined };
      }
      default:
        return undefined;
    }
  }

  const botFor = (token: string): StandInBot | undefined => {
    const digits = /^(\d{1,20}):/.exec(token)?.[1];
    if (digits === undefined) return undefined;
    const id = Number(digits);
    const bot: StandInBot = { token, id, username: `bot${id}_bot`, webhook: null };
    bots.set(token, bot);
    return bot;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    if (!match) return answer(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = match;
    const { params, files } = await readBody(req);
    requests.push({ method, token, params, files, at: Date.now() });
    const bot = bots.get(token) ?? (options.anyToken ? botFor(token) : undefined);
    if (!bot) return refuse(res, { errorCode: 401, description: 'Unauthorized' });
    const refusal = refusals.get(method)?.shift();
    if (refusal) return refuse(res, refusal);
    const value = result(bot, method, params, files);
    if (value === undefined) return answer(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    answer(res, 200, { ok: true, result: value });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    addBot: (username = `bot${nextBotId}_bot`) => {
      const id = nextBotId++;
      const bot: StandInBot = { token: `${id}:${randomBytes(26).toString('base64url')}`, id, username, webhook: null };
      bots.set(bot.token, bot);
      return bot;
    },
    refuseNext: (method, refusal) => {
      refusals.set(method, [...(refusals.get(method) ?? []), refusal]);
    },
    deliverUpdate: async (bot, update, options) => {
      if (!bot.webhook) throw new Error(`bot ${bot.username} has no webhook`);
      const target = new URL(bot.webhook.url);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const secretToken = options.secretToken ?? bot.webhook.secretToken;
      if (secretToken !== undefined) headers['x-telegram-bot-api-secret-token'] = secretToken;
      const response = await fetch(`${options.apiUrl}${target.pathname}`, { method: 'POST', headers, body: JSON.stringify(update) });
      await response.text();
      return response.status;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
