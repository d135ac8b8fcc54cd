import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import { loadConfig } from '../core/config';
import { findDomainByName, setInboundEnabled } from '../db/repositories/domains';
import { createSequelize } from '../db/sequelize';
import { startDnsServer } from '../test/helpers/dns-server';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { freePort } from '../test/helpers/free-port';
import { percentile } from './stats';

/**
 * `npm run bench -- inbound-memory`: the inbound listener (`workers/inbox/smtp.ts`, its own process, as
 * `npm start` runs it) under SESSIONS concurrent senders of one MESSAGE_BYTES message each (100 × 40 MB by
 * default, from a process of their own), beside a small sender delivering a 2 KB message every PROBE_MS throughout. Reported, in one run:
 * a quiet phase (the small sender alone) and the loaded phase, each with the listener's resident memory (peak,
 * from /proc VmHWM and sampled VmRSS) and the small sender's latency. Raw mail goes to an S3 sink in the senders'
 * process that reads and discards each upload, so gigabytes never reach the shared stand-in; Temporal is an
 * address nobody answers (the outbox keeps what the hand-off could not start).
 *
 * BENCH_LISTENER_DIR runs the listener of another checkout (a baseline of older code, same database).
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const MESSAGE_BYTES = Number(process.env.BENCH_MESSAGE_BYTES ?? 40_000_000);
const PROBE_MS = Number(process.env.BENCH_PROBE_MS ?? 250);
const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 10);

const MB = 1024 * 1024;
const smallMail = (to: string) =>
  `From: Probe <probe@bench.example.net>\r\nTo: ${to}\r\nSubject: Probe\r\nMessage-ID: <${randomUUID()}@bench.example.net>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n${'A small message among large ones. '.repeat(60)}\r\n`;

/** A message of `bytes` generated as it is sent: the senders must not hold gigabytes themselves. */
function largeMail(to: string, bytes: number): Readable {
  const header = Buffer.from(`From: Big <big@bench.example.net>\r\nTo: ${to}\r\nSubject: Large\r\nMessage-ID: <${randomUUID()}@bench.example.net>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n`);
  const line = Buffer.from(`${'0123456789abcdef'.repeat(4)}\r\n`);
  const block = Buffer.concat(Array.from({ length: 1024 }, () => line));
  let left = bytes - header.length;
  let sentHeader = false;
  return new Readable({
    read() {
      if (!sentHeader) {
        sentHeader = true;
        return void this.push(header);
      }
      if (left <= 0) return void this.push(null);
      const chunk = block.subarray(0, Math.min(block.length, left));
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

/** An S3 endpoint that answers every bucket call and reads each upload to the end, keeping nothing. */
function startS3Sink(): Promise<{ server: Server; port: number; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    request.on('end', () => {
      response.statusCode = request.method === 'DELETE' ? 204 : 200;
      if (request.method === 'PUT') response.setHeader('ETag', '"bench"');
      response.end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, received: () => received })));
}

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(/\d+/.exec(status.split('\n').find((line) => line.startsWith(`${name}:`)) ?? '0')?.[0] ?? 0) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

async function untilGreets(port: number, child: ChildProcess): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    if (child.exitCode !== null) throw new Error(`the listener exited with ${child.exitCode}`);
    const greeted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('220'));
      });
      socket.once('error', () => resolve(false));
    });
    if (greeted) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the listener did not greet in 60 s');
}

/** The small sender: one message every PROBE_MS until `stop()`, each on a new connection, as an MX peer sends. */
function probe(port: number, to: string) {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'probe.bench.example.net' });
      const started = performance.now();
      try {
        await transport.sendMail({ envelope: { from: 'probe@bench.example.net', to }, raw: smallMail(to) });
        latencies.push(performance.now() - started);
      } catch {
        failures += 1;
      }
      transport.close();
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sorted = latencies.sort((a, b) => a - b);
      return { count: latencies.length, failures, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] ?? 0 };
    },
  };
}

interface LoadResult {
  outcomes: string[];
  seconds: number;
  received: number;
}

/** Asks the load process to send the large messages and answers what became of them. */
function loadOf(loader: ChildProcess, target: { port: number; to: string }): Promise<LoadResult> {
  const done = new Promise<LoadResult>((resolve) => loader.once('message', (message: LoadResult) => resolve(message)));
  loader.send(target);
  return done;
}

/** SESSIONS senders of one MESSAGE_BYTES message each, all at once, declaring SIZE= as Postfix does. */
async function sendLarge(port: number, to: string): Promise<string[]> {
  return Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'big.bench.example.net', socketTimeout: 600_000 });
      try {
        // nodemailer passes SIZE on when the envelope has it.
        const envelope = { from: 'big@bench.example.net', to, size: MESSAGE_BYTES };
        await transport.sendMail({ envelope, raw: largeMail(to, MESSAGE_BYTES) });
        return 'accepted';
      } catch (error) {
        return String((error as { responseCode?: number }).responseCode ?? (error as Error).message);
      } finally {
        transport.close();
      }
    }),
  );
}

/** The load process: the S3 sink, then the large senders when told where to send. */
async function runLoad(): Promise<void> {
  const sink = await startS3Sink();
  process.send?.({ sinkPort: sink.port });
  process.once('message', (target: { port: number; to: string }) => {
    const started = performance.now();
    void sendLarge(target.port, target.to).then((outcomes) => {
      process.send?.({ outcomes, seconds: (performance.now() - started) / 1_000, received: sink.received() });
    });
  });
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const dns = await startDnsServer();
  // The large senders and the S3 sink load their own process, so the probe's latency is the listener's.
  const loader = fork(__filename, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_ROLE: 'load' } });
  const sinkPort = await new Promise<number>((resolve) => loader.once('message', (message: { sinkPort: number }) => resolve(message.sinkPort)));
  const { workspaceId, domain } = await createTestWorkspace(db, { domain: { masterKey: config.MASTER_KEY } });
  const found = await findDomainByName(db, workspaceId, domain);
  await setInboundEnabled(db, workspaceId, found!.id, true);
  await db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part) VALUES ($1, $2, $3, $4)', { bind: [randomUUID(), workspaceId, found!.id, 'bench'] });
  const to = `bench@${domain}`;

  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/inbox/smtp.ts'], {
    cwd: process.env.BENCH_LISTENER_DIR ?? process.cwd(),
    env: {
      ...process.env,
      LOG_LEVEL: 'error',
      INBOUND_SMTP_HOST: '127.0.0.1',
      INBOUND_SMTP_PORT: String(port),
      AWS_ENDPOINT_URL: `http://127.0.0.1:${sinkPort}`,
      DNS_SERVERS: dns.address,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      // Every sender here is 127.0.0.1: the per-address limits would measure themselves.
      INBOUND_MAX_CONNECTIONS_PER_IP: '1000',
      INBOUND_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
      INBOUND_MESSAGES_PER_IP_PER_MINUTE: '1000000',
      INBOUND_STORAGE_QUOTA_BYTES: String(2 ** 50),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await untilGreets(port, child);
  const pid = child.pid as number;

  const quietProbe = probe(port, to);
  let quietRss = 0;
  for (let second = 0; second < QUIET_SECONDS * 5; second += 1) {
    quietRss = Math.max(quietRss, memoryOf(pid).rss);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const quiet = await quietProbe.stop();
  const quietPeak = memoryOf(pid).peak;

  const loadProbe = probe(port, to);
  let loadRss = 0;
  const sampler = setInterval(() => {
    loadRss = Math.max(loadRss, memoryOf(pid).rss);
  }, 100);
  const load = await loadOf(loader, { port, to });
  clearInterval(sampler);
  const loaded = await loadProbe.stop();
  const loadPeak = memoryOf(pid).peak;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));

  const tally = new Map<string, number>();
  for (const outcome of load.outcomes) tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
  const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(`inbound listener memory: ${SESSIONS} concurrent sessions of ${(MESSAGE_BYTES / 1e6).toFixed(0)} MB, a ${Buffer.byteLength(smallMail(to))} byte probe every ${PROBE_MS} ms${process.env.BENCH_LISTENER_DIR ? ` (listener from ${process.env.BENCH_LISTENER_DIR})` : ''}`);
  console.log(`  quiet   peak RSS ${mb(quietPeak)} (sampled ${mb(quietRss)})   probe p50 ${ms(quiet.p50)} p95 ${ms(quiet.p95)} max ${ms(quiet.max)}   ${quiet.count} sent, ${quiet.failures} failed`);
  console.log(`  loaded  peak RSS ${mb(loadPeak)} (sampled ${mb(loadRss)})   probe p50 ${ms(loaded.p50)} p95 ${ms(loaded.p95)} max ${ms(loaded.max)}   ${loaded.count} sent, ${loaded.failures} failed`);
  console.log(`  large messages: ${[...tally].map(([outcome, count]) => `${count} ${outcome}`).join(', ')} in ${load.seconds.toFixed(1)} s; ${mb(load.received)} uploaded to the S3 sink`);
  loader.kill();
  await dns.close();
  await db.close();
}

(process.env.BENCH_ROLE === 'load' ? runLoad() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
