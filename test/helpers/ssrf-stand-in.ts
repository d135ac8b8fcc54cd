import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What SSRF tests need without ever leaving the machine: an HTTPS server on loopback that stands in
 * for a public host (with a certificate for its made-up names), a DNS stand-in, and a guard that
 * records every socket the process opens and refuses any that is not loopback.
 */

export const STAND_IN_NAMES = ['files.test', 'cdn.files.test'];

function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ssrf-stand-in-'));
  try {
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
        '-subj', '/CN=files.test', '-addext', `subjectAltName=${STAND_IN_NAMES.map((name) => `DNS:${name}`).join(',')}`,
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface StandInServer {
  port: number;
  /** PEM of the certificate, to trust it as a CA. */
  ca: string;
  /** TCP connections the server accepted. */
  connections: () => number;
  /** Paths requested, in order. */
  requests: string[];
  close: () => Promise<void>;
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export async function startStandInServer(routes: Record<string, Route>): Promise<StandInServer> {
  const { key, cert } = selfSignedCertificate();
  const requests: string[] = [];
  let accepted = 0;
  const server: Server = createServer({ key, cert }, (req, res) => {
    requests.push(req.url ?? '');
    const route = routes[new URL(req.url ?? '/', 'https://files.test').pathname];
    if (route) return route(req, res);
    res.writeHead(404).end('not found');
  });
  server.on('connection', () => {
    accepted += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: cert,
    connections: () => accepted,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A DNS stand-in: names it does not know fail, so a test can never ask the real resolver. */
export function standInResolver(records: Record<string, string[]>): (hostname: string) => Promise<string[]> {
  return async (hostname) => {
    const addresses = records[hostname.toLowerCase()];
    if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
    return addresses;
  };
}

export interface SocketGuard {
  /** `host:port` of every TCP connection attempted while installed. */
  attempts: string[];
  restore: () => void;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/i;

/**
 * Port 1 on loopback is where other test files point a client that must find nothing listening (Redis,
 * S3, the Bot API). Jest runs files one after another in the same process, and such a client's reconnect
 * timer can outlive its file, so its attempts are not this file's fetcher's: they are not recorded.
 * No SSRF test ever asks the fetcher for port 1.
 */
const DEAD_PORT = 1;

/**
 * Wraps net.Socket#connect (which http, https and tls all go through) to record each attempt and to
 * refuse, before any packet, a host that is not loopback. A fetcher bug then fails a test instead of
 * reaching the network.
 */
export function guardSockets(): SocketGuard {
  const original = net.Socket.prototype.connect;
  const attempts: string[] = [];
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const options = (typeof first === 'object' && first !== null ? first : { port: first, host: args[1] }) as {
      host?: string;
      port?: number;
      path?: string | null;
    };
    // A Unix socket (path) is not the network; TCP connections have no path (tls.connect passes null).
    if (!options.path) {
      const host = options.host ?? 'localhost';
      const strayRetry = LOOPBACK.test(host) && Number(options.port) === DEAD_PORT;
      if (!strayRetry) attempts.push(`${host}:${options.port}`);
      if (!LOOPBACK.test(host)) throw new Error(`test guard: refused a connection to ${host}:${options.port}`);
    }
    return (original as (...rest: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    attempts,
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}
