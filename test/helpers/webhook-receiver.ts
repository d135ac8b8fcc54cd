import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sequelize } from 'sequelize';
import { keyringOf, parseMasterKey, sealSecret } from '../../core/secrets';
import { generateWebhookSecret } from '../../core/webhook-signing';
import { insertWebhook } from '../../db/repositories/webhooks';

/** A request a receiver got: the raw body and the Standard Webhooks headers, as a receiver sees them. */
export interface ReceivedRequest {
  path: string;
  body: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  contentType: string | undefined;
  /** When it arrived, by the clock the receiver was given (the test server's under time skipping). */
  at: number;
}

/** What a path answers: a status code, or `hang` (never answers: a slow endpoint). */
export type Answer = number | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`: reachable with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true. */
  url: string;
  requests: ReceivedRequest[];
  /** Requests to one path, in order of arrival. */
  to: (path: string) => ReceivedRequest[];
  /** Waits until the path got at least `count` requests. */
  waitFor: (path: string, count?: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  close: () => Promise<void>;
}

/**
 * A local webhook receiver. `answer` decides each request's status (200 unless it says otherwise), given
 * the path and the arrival time by `clock` (the wall clock unless replaced).
 */
export async function startWebhookReceiver(
  answer: (path: string, at: number) => Answer = () => 200,
  clock: () => Promise<number> = async () => Date.now(),
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const at = await clock();
    const path = req.url ?? '/';
    requests.push({
      path,
      body: Buffer.concat(chunks).toString('utf8'),
      headers: {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      },
      contentType: req.headers['content-type'],
      at,
    });
    const status = answer(path, at);
    if (status !== 'hang') res.writeHead(status).end();
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const to = (path: string) => requests.filter((request) => request.path === path);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    to,
    waitFor: async (path, count = 1, timeoutMs = 20_000) => {
      for (const deadline = Date.now() + timeoutMs; to(path).length < count; ) {
        if (Date.now() > deadline) throw new Error(`${path} got ${to(path).length} requests, not ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return to(path);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Adds a webhook straight to the database (as the API would, without its URL check); returns its id and secret. */
export async function createWebhookRow(
  db: Sequelize,
  workspaceId: string,
  masterKey: string,
  options: { url: string; events: string[]; enabled?: boolean },
): Promise<{ id: string; secret: string }> {
  const secret = generateWebhookSecret();
  const id = randomUUID();
  const webhook = await insertWebhook(
    db,
    workspaceId,
    { id, url: options.url, description: null, events: options.events, enabled: options.enabled ?? true, secretSealed: sealSecret(keyringOf(parseMasterKey(masterKey)), { workspaceId, column: 'webhooks.secret', row: id }, secret) },
    100,
  );
  if (webhook === 'limit') throw new Error('too many webhooks');
  return { id: webhook.id, secret };
}
