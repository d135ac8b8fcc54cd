import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, isLoopbackName } from '../core/public-address';

/**
 * Reaches a customer-given URL (an attachment to fetch, a webhook to call) without letting it reach
 * anything but the public internet (SSRF). Every hop is https; its host is resolved here, every address
 * it resolves to must be public, and the connection goes to the address that was checked (so a DNS
 * answer that changes between check and connect, DNS rebinding, cannot lead inside). Redirects are
 * followed by hand, each one checked again. Size and total time are bounded. A refusal happens before
 * any connection is opened.
 */
export interface PublicFetchOptions {
  maxBytes: number;
  /** For the whole fetch: resolution, every redirect and the body. */
  timeoutMs: number;
  maxRedirects: number;
  /** Resolves a host name to its addresses (all of them); the system resolver unless replaced. */
  resolveHost: (hostname: string) => Promise<string[]>;
  /**
   * TESTS ONLY. Treats 127.0.0.1 and ::1 on exactly this port as public, so a local HTTPS server can
   * stand in for a public one. Every other loopback port, and every other rule, still applies.
   */
  testOnlyPublicLoopbackPort?: number;
  /** Extra trusted certificate authorities (PEM), for a test server's self-signed certificate. */
  ca?: string;
  /**
   * Local development and tests only (WEBHOOKS_ALLOW_PRIVATE_TARGETS): http URLs and private, loopback
   * and link-local addresses are allowed, so a receiver on the developer's machine can be reached.
   */
  allowPrivateTargets?: boolean;
  /**
   * Bytes left for several fetches together (a message's attachments), shared and decremented as bodies
   * arrive, so concurrent fetches cannot hold more than the message may carry.
   */
  sharedBudget?: { remaining: number };
}

export const PUBLIC_FETCH_DEFAULTS: PublicFetchOptions = {
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 10_000,
  maxRedirects: 5,
  resolveHost: async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address),
};

export type PublicFetchFailure =
  | 'invalid_url'
  | 'not_https'
  | 'blocked_address'
  | 'unresolvable'
  | 'too_many_redirects'
  | 'http_status'
  | 'too_large'
  | 'timeout'
  | 'network';

export class PublicFetchError extends Error {
  constructor(
    readonly reason: PublicFetchFailure,
    message: string,
  ) {
    super(message);
    this.name = 'PublicFetchError';
  }
}

export interface FetchedFile {
  bytes: Buffer;
  contentType: string | null;
  /** Where the bytes came from after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function target(raw: string, options: Pick<PublicFetchOptions, 'allowPrivateTargets'>): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PublicFetchError('invalid_url', 'not a valid URL');
  }
  const allowed = options.allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) throw new PublicFetchError('not_https', `only https URLs are allowed, not ${url.protocol}`);
  if (url.username || url.password) throw new PublicFetchError('invalid_url', 'URLs with credentials are not fetched');
  return url;
}

function followLocation(location: string, from: URL): string {
  try {
    return new URL(location, from).toString();
  } catch {
    throw new PublicFetchError('invalid_url', 'the redirect location is not a valid URL');
  }
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(new PublicFetchError('timeout', 'the fetch took too long'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * A refusal of a host by name says only that the name is not allowed: never the address it resolved to,
 * nor its kind, nor whether it resolved at all. The tenant reads this message (a 422, a delivery
 * attempt, an import's error), so anything more would make us a DNS oracle into our own network.
 */
const refusedName = (hostname: string) => `${hostname} is not allowed: a host must resolve to public addresses only`;

/** Resolves the URL's host and returns the address to connect to, or refuses it. */
async function vet(url: URL, options: PublicFetchOptions, signal: AbortSignal): Promise<string> {
  // The URL parser has already turned 127.1, 0x7f000001, 2130706433 and 017700000001 into 127.0.0.1.
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = portOf(url);
  if (isLoopbackName(hostname) && !options.allowPrivateTargets) throw new PublicFetchError('blocked_address', refusedName(hostname));
  const literal = isIP(hostname) !== 0;
  let addresses: string[];
  if (literal) {
    addresses = [hostname];
  } else {
    try {
      addresses = await withDeadline(options.resolveHost(hostname), signal);
    } catch (error) {
      if (error instanceof PublicFetchError) throw error;
      throw new PublicFetchError('unresolvable', refusedName(hostname));
    }
  }
  if (!addresses.length) throw new PublicFetchError('unresolvable', refusedName(hostname));
  if (options.allowPrivateTargets) return addresses[0];
  // Every address must be public: a name that also resolves inside could be steered there.
  for (const address of addresses) {
    const standIn = options.testOnlyPublicLoopbackPort === port && (address === '127.0.0.1' || address === '::1');
    if (!standIn && !classifyAddress(address).public) {
      // An address the tenant wrote itself reveals nothing when named back; a resolved one would.
      throw new PublicFetchError('blocked_address', literal ? `${hostname} is not allowed: not a public address` : refusedName(hostname));
    }
  }
  return addresses[0];
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'http:' ? 80 : 443));
}

interface RequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function send(url: URL, address: string, options: PublicFetchOptions, signal: AbortSignal, init: RequestInit): Promise<IncomingMessage> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: address,
        port: portOf(url),
        path: `${url.pathname}${url.search}`,
        method: init.method,
        // The certificate is checked against the URL's name (SNI too), while the socket goes to the vetted address.
        servername: isIP(hostname) ? '' : hostname,
        headers: { host: url.host, 'accept-encoding': 'identity', ...init.headers },
        agent: false,
        ca: options.ca,
        signal,
      },
      resolve,
    );
    req.on('error', (error) => {
      // Node's message names the address connected to; the host the tenant gave is all it needs to hear.
      const code = (error as NodeJS.ErrnoException).code;
      reject(signal.aborted ? new PublicFetchError('timeout', 'the fetch took too long') : new PublicFetchError('network', `${hostname} could not be reached${code ? ` (${code})` : ''}`));
    });
    req.end(init.body);
  });
}

async function readBody(response: IncomingMessage, options: PublicFetchOptions, signal: AbortSignal): Promise<Buffer> {
  const { maxBytes, sharedBudget } = options;
  const tooLarge = () => {
    response.destroy();
    return new PublicFetchError('too_large', `the file is larger than ${maxBytes} bytes`);
  };
  const overBudget = () => {
    response.destroy();
    return new PublicFetchError('too_large', 'the files together are larger than allowed');
  };
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  if (sharedBudget && Number.isFinite(declared) && declared > sharedBudget.remaining) throw overBudget();
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw tooLarge();
      if (sharedBudget) {
        sharedBudget.remaining -= chunk.length;
        if (sharedBudget.remaining < 0) throw overBudget();
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof PublicFetchError) throw error;
    throw signal.aborted
      ? new PublicFetchError('timeout', 'the fetch took too long')
      : new PublicFetchError('network', error instanceof Error ? error.message : String(error));
  }
  return Buffer.concat(chunks);
}

export async function fetchPublicFile(raw: string, overrides: Partial<PublicFetchOptions> = {}): Promise<FetchedFile> {
  const options: PublicFetchOptions = { ...PUBLIC_FETCH_DEFAULTS, ...overrides };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const { signal } = controller;
  try {
    let url = target(raw, options);
    for (let redirects = 0; ; redirects += 1) {
      const address = await vet(url, options, signal);
      const response = await send(url, address, options, signal, { method: 'GET', headers: { accept: '*/*', 'user-agent': 'messaging-attachments/1.0' } });
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location) {
        response.resume();
        if (redirects >= options.maxRedirects) throw new PublicFetchError('too_many_redirects', `more than ${options.maxRedirects} redirects`);
        url = target(followLocation(response.headers.location, url), options);
        continue;
      }
      if (status < 200 || status > 299) {
        response.resume();
        throw new PublicFetchError('http_status', `the server answered ${status}`);
      }
      const bytes = await readBody(response, options, signal);
      return { bytes, contentType: response.headers['content-type'] ?? null, url: url.toString() };
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks that a URL may be reached (scheme, and every address its host resolves to now) without
 * connecting: what a webhook's URL must pass when it is saved. Its calls are checked again each time.
 */
export async function checkPublicUrl(raw: string, overrides: Partial<PublicFetchOptions> = {}): Promise<void> {
  const options: PublicFetchOptions = { ...PUBLIC_FETCH_DEFAULTS, ...overrides };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    await vet(target(raw, options), options, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * POSTs a body and answers the status code, whatever it is, once the response headers arrive within
 * `timeoutMs` (resolution and connection included). Redirects are not followed (a webhook receiver
 * answers where it was asked); the response body is not read.
 */
export async function postPublic(
  raw: string,
  request: { body: string; headers: Record<string, string> },
  overrides: Partial<PublicFetchOptions> = {},
): Promise<{ statusCode: number }> {
  const { statusCode } = await post(raw, request, overrides, false);
  return { statusCode };
}

/**
 * POSTs a body and reads the answer (status and body, up to `maxBytes`) within `timeoutMs`: an API call to a
 * customer-given server (the analytics connector's Matomo). Redirects are not followed: a POST carrying a
 * credential must not be replayed to wherever the server points.
 */
export async function exchangePublic(
  raw: string,
  request: { body: string; headers: Record<string, string> },
  overrides: Partial<PublicFetchOptions> = {},
): Promise<{ statusCode: number; body: Buffer }> {
  return post(raw, request, overrides, true);
}

async function post(
  raw: string,
  request: { body: string; headers: Record<string, string> },
  overrides: Partial<PublicFetchOptions>,
  readAnswer: boolean,
): Promise<{ statusCode: number; body: Buffer }> {
  const options: PublicFetchOptions = { ...PUBLIC_FETCH_DEFAULTS, ...overrides };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const { signal } = controller;
  try {
    const url = target(raw, options);
    const address = await vet(url, options, signal);
    const response = await send(url, address, options, signal, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      body: request.body,
    });
    const statusCode = response.statusCode ?? 0;
    if (readAnswer) return { statusCode, body: await readBody(response, options, signal) };
    // Only the status matters; a receiver streaming an endless body must not hold the socket.
    response.destroy();
    return { statusCode, body: Buffer.alloc(0) };
  } finally {
    clearTimeout(timer);
  }
}
