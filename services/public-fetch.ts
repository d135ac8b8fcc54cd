import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, isLoopbackName } from '../core/public-address';

/**
 * Fetches a customer-given URL without letting it reach anything but the public internet (SSRF).
 * Every hop is https; its host is resolved here, every address it resolves to must be public, and the
 * connection goes to the address that was checked (so a DNS answer that changes between check and
 * connect cannot lead inside). Redirects are followed by hand, each one checked again. Size and total
 * time are bounded. A refusal happens before any connection is opened.
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

function target(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PublicFetchError('invalid_url', 'not a valid URL');
  }
  if (url.protocol !== 'https:') throw new PublicFetchError('not_https', `only https URLs are fetched, not ${url.protocol}`);
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

/** Resolves the URL's host and returns the address to connect to, or refuses it. */
async function vet(url: URL, options: PublicFetchOptions, signal: AbortSignal): Promise<string> {
  // The URL parser has already turned 127.1, 0x7f000001, 2130706433 and 017700000001 into 127.0.0.1.
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  if (isLoopbackName(hostname)) throw new PublicFetchError('blocked_address', `${hostname} is a loopback name`);
  let addresses: string[];
  if (isIP(hostname)) {
    addresses = [hostname];
  } else {
    try {
      addresses = await withDeadline(options.resolveHost(hostname), signal);
    } catch (error) {
      if (error instanceof PublicFetchError) throw error;
      throw new PublicFetchError('unresolvable', `${hostname} does not resolve`);
    }
  }
  if (!addresses.length) throw new PublicFetchError('unresolvable', `${hostname} does not resolve`);
  // Every address must be public: a name that also resolves inside could be steered there.
  for (const address of addresses) {
    const standIn = options.testOnlyPublicLoopbackPort === port && (address === '127.0.0.1' || address === '::1');
    const verdict = classifyAddress(address);
    if (!standIn && !verdict.public) {
      throw new PublicFetchError('blocked_address', `${hostname} resolves to ${address}, ${verdict.reason}`);
    }
  }
  return addresses[0];
}

function get(url: URL, address: string, options: PublicFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: address,
        port: Number(url.port || 443),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        // The certificate is checked against the URL's name (SNI too), while the socket goes to the vetted address.
        servername: isIP(hostname) ? '' : hostname,
        headers: { host: url.host, accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'messaging-attachments/1.0' },
        agent: false,
        ca: options.ca,
        signal,
      },
      resolve,
    );
    req.on('error', (error) => {
      reject(signal.aborted ? new PublicFetchError('timeout', 'the fetch took too long') : new PublicFetchError('network', error.message));
    });
    req.end();
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
    let url = target(raw);
    for (let redirects = 0; ; redirects += 1) {
      const address = await vet(url, options, signal);
      const response = await get(url, address, options, signal);
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location) {
        response.resume();
        if (redirects >= options.maxRedirects) throw new PublicFetchError('too_many_redirects', `more than ${options.maxRedirects} redirects`);
        url = target(followLocation(response.headers.location, url));
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
