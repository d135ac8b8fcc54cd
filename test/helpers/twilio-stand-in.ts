import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the stand-in got, its form parameters decoded (repeated keys, such as MediaUrl, as arrays). */
export interface TwilioRequest {
  method: string;
  path: string;
  /** The basic-auth user (the account SID the client authenticated as). */
  username: string | null;
  params: Record<string, string | string[]>;
}

/** Twilio's error answers the tests ask for, as Twilio words them. */
const REFUSALS = {
  'invalid-number': { status: 400, code: 21211, message: 'Invalid \'To\' Phone Number' },
  'not-mobile': { status: 400, code: 21614, message: '\'To\' number is not a valid mobile number' },
  unsubscribed: { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' },
  'too-many-requests': { status: 429, code: 20429, message: 'Too Many Requests' },
} as const;

export type Refusal = keyof typeof REFUSALS;

export interface CallbackRequest {
  postTo: string;
  signedUrl: string;
  authToken: string;
  params: Record<string, string>;
  signature?: string;
}

export interface TwilioStandIn {
  /** `http://127.0.0.1:<port>`: TWILIO_API_URL. */
  url: string;
  requests: TwilioRequest[];
  /** The Messages.json sends, in order. */
  sends: () => TwilioRequest[];
  /** An account whose SID and auth token the stand-in accepts. */
  addAccount: (accountSid: string, authToken: string) => void;
  /** Sends to this recipient (`whatsapp:+…`) are answered with the refusal until cleared. */
  refuse: (to: string, refusal: Refusal | null) => void;
  /**
   * Posts a callback to the service as Twilio does: form-encoded, signed with `authToken` over the public URL
   * Twilio was given (`signedUrl`, under PUBLIC_BASE_URL) and the parameters, unless a `signature` is given.
   * It goes to `postTo` (the API's local address, as a proxy in front of it would). Answers the status code.
   */
  callback: (callback: CallbackRequest) => Promise<number>;
  close: () => Promise<void>;
}

/**
 * Twilio's request signature (twilio.com/docs/usage/security): HMAC-SHA1 with the auth token over the full URL
 * followed by each POST parameter's name and value, sorted by name; base64. Written out here rather than taken
 * from the `twilio` library, so the service's validation is checked against an independent implementation.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params).sort().reduce((acc, name) => acc + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

function decodeForm(text: string): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = params[name];
    params[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return params;
}

function basicAuth(req: IncomingMessage): { username: string; password: string } | null {
  const match = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** A local stand-in of the Twilio REST API: the account fetch and the Messages resource, with basic auth. */
export async function startTwilioStandIn(options: { anyAccount?: boolean } = {}): Promise<TwilioStandIn> {
  const accounts = new Map<string, string>();
  const refusals = new Map<string, Refusal>();
  const requests: TwilioRequest[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    const auth = basicAuth(req);
    requests.push({ method: req.method ?? 'GET', path, username: auth?.username ?? null, params: decodeForm(Buffer.concat(chunks).toString('utf8')) });
    const request = requests[requests.length - 1];

    const account = /^\/2010-04-01\/Accounts\/(AC[0-9a-fA-F]{32})(\.json|\/Messages\.json)$/.exec(path);
    if (!account) return json(res, 404, { code: 20404, message: 'The requested resource was not found', status: 404 });
    const [, sid, resource] = account;
    // anyAccount: every SID and token pair is an account (the contract suite generates credentials).
    const known = options.anyAccount || accounts.get(sid) === auth?.password;
    if (!auth || auth.username !== sid || !known) {
      return json(res, 401, { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
    }
    if (resource === '.json' && req.method === 'GET') return json(res, 200, { sid, friendly_name: 'Stand-in account', status: 'active', type: 'Full' });
    if (resource !== '/Messages.json' || req.method !== 'POST') return json(res, 405, { code: 20004, message: 'Method not allowed', status: 405 });

    const refusal = refusals.get(String(request.params.To));
    if (refusal) return json(res, REFUSALS[refusal].status, { ...REFUSALS[refusal], more_info: `https://www.twilio.com/docs/errors/${REFUSALS[refusal].code}` });
    return json(res, 201, {
      sid: `SM${randomBytes(16).toString('hex')}`,
      account_sid: sid,
      from: request.params.From,
      to: request.params.To,
      body: request.params.Body ?? '',
      status: 'queued',
      num_media: String([request.params.MediaUrl ?? []].flat().length),
      date_created: new Date().toUTCString(),
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    sends: () => requests.filter((request) => request.method === 'POST' && request.path.endsWith('/Messages.json')),
    addAccount: (accountSid, authToken) => accounts.set(accountSid, authToken),
    refuse: (to, refusal) => (refusal ? refusals.set(to, refusal) : refusals.delete(to)),
    callback: async ({ postTo, signedUrl, authToken, params, signature }) => {
      const response = await fetch(postTo, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature ?? twilioSignature(authToken, signedUrl, params) },
        body: new URLSearchParams(params).toString(),
      });
      await response.arrayBuffer();
      return response.status;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
