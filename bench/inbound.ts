import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { connectTemporal } from '../temporal/connection';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../core/config';
import { blobStoreOptions, createBlobStore } from '../db/blob-store';
import { findDomainByName, setInboundEnabled } from '../db/repositories/domains';
import { createSequelize } from '../db/sequelize';
import { startDnsServer } from '../test/helpers/dns-server';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { QueryTypes, type Sequelize } from 'sequelize';
import { startInboundMailWorkflows } from '../workers/inbox/acceptance';
import { inboundLimits } from '../workers/inbox/limits';
import { closeInboundSmtp, createInboundSmtpServer, listenInboundSmtp } from '../workers/inbox/smtp-server';
import { percentile } from './stats';
import { startWorkerProcess } from './worker-process';

/**
 * `npm run bench -- inbound`: inbound messages accepted per second over SMTP by SENDERS concurrent senders
 * (nodemailer, one connection each, messages back to back), against the listener (RCPT checks in Postgres,
 * mailauth over a local DNS server, raw to S3, a received row) and, as the baseline, a bare smtp-server that
 * reads and discards each message, on the same machine in the same run. Then the same load with the hand-off
 * starting each message's inbound-mail workflow on the worker (its own process, as `npm start` runs it): the
 * accepted rate while the worker parses and threads beside the listener, and the time until every message is
 * processed (end to end: SMTP to a threaded, stored message with its `email.received` event).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 20);

const body = 'Hello,\r\n\r\n' + 'This is a benchmark message of ordinary size. '.repeat(40) + '\r\n';
const raw = (to: string) =>
  `From: Sender <sender@bench.example.net>\r\nTo: ${to}\r\nSubject: Benchmark\r\nMessage-ID: <${randomUUID()}@bench.example.net>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}`;

async function drive(port: number, to: string): Promise<{ perSecond: number; p50: number; p95: number; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const until = started + SECONDS * 1_000;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
      while (performance.now() < until) {
        const sent = performance.now();
        try {
          await transport.sendMail({ envelope: { from: 'sender@bench.example.net', to }, raw: raw(to) });
          latencies.push(performance.now() - sent);
        } catch {
          failures += 1;
        }
      }
      transport.close();
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return { perSecond: (latencies.length * 1_000) / (performance.now() - started), p50: percentile(sorted, 50), p95: percentile(sorted, 95), failures };
}

const countOf = async (db: Sequelize, inboxId: string, status: string) =>
  Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM inbox_messages WHERE inbox_id = $1 AND status = $2', { bind: [inboxId, status], type: QueryTypes.SELECT }))[0].n);

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const blobs = createBlobStore(blobStoreOptions(config));
  const dns = await startDnsServer();
  const { workspaceId, domain } = await createTestWorkspace(db, { domain: { masterKey: config.MASTER_KEY } });
  const found = await findDomainByName(db, workspaceId, domain);
  await setInboundEnabled(db, workspaceId, found!.id, true);
  const inboxId = randomUUID();
  await db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part) VALUES ($1, $2, $3, $4)', { bind: [inboxId, workspaceId, found!.id, 'bench'] });
  await blobs.ensureBucket();
  // Every sender is 127.0.0.1: the per-address rates would measure themselves, not the listener.
  const limits = { ...inboundLimits(config), connectionsPerIpPerMinute: 1_000_000, messagesPerIpPerMinute: 1_000_000, connectionsPerIp: 1_000 };

  const bare = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    closeTimeout: 200,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => callback());
    },
  });
  const barePort = await listenInboundSmtp(bare, '127.0.0.1', 0);
  const baseline = await drive(barePort, `bench@${domain}`);
  await closeInboundSmtp(bare);

  const listener = createInboundSmtpServer({
    db, blobs, resolver: dns.resolver, mxHost: 'inbound.bench.local', limits,
    logger: pino({ level: 'silent' }), handOff: async () => undefined, closeTimeoutMs: 200,
  });
  const port = await listenInboundSmtp(listener, '127.0.0.1', 0);
  const ours = await drive(port, `bench@${domain}`);
  await closeInboundSmtp(listener);

  // The stored-only phase left rows `received` that no workflow will take: marked so the next phase counts its own.
  await db.query("UPDATE inbox_messages SET status = 'processed', workflow_started_at = now() WHERE inbox_id = $1 AND status = 'received'", { bind: [inboxId] });
  const prefix = `bench-inbound-${randomUUID().slice(0, 8)}-`;
  const worker = await startWorkerProcess({ DATABASE_URL: config.DATABASE_URL, TASK_QUEUE_PREFIX: prefix, SEND_DISPATCHER: 'false' });
  const client = await connectTemporal(config);
  const processedBefore = await countOf(db, inboxId, 'processed');
  const working = createInboundSmtpServer({
    db, blobs, resolver: dns.resolver, mxHost: 'inbound.bench.local', limits,
    logger: pino({ level: 'silent' }), closeTimeoutMs: 200,
    handOff: (accepted) => startInboundMailWorkflows({ db, client, taskQueuePrefix: prefix }, accepted),
  });
  const workingPort = await listenInboundSmtp(working, '127.0.0.1', 0);
  const loadStarted = performance.now();
  const processing = await drive(workingPort, `bench@${domain}`);
  const accepted = (await countOf(db, inboxId, 'processed')) - processedBefore + (await countOf(db, inboxId, 'received'));
  while ((await countOf(db, inboxId, 'received')) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  const drainedSeconds = (performance.now() - loadStarted) / 1_000;
  await closeInboundSmtp(working);
  await client.connection.close();
  await worker.stop();

  const line = (name: string, figures: typeof ours) =>
    `  ${name.padEnd(34)} ${figures.perSecond.toFixed(0).padStart(6)} msg/s   p50 ${figures.p50.toFixed(1)} ms   p95 ${figures.p95.toFixed(1)} ms   failures ${figures.failures}`;
  console.log(`inbound SMTP, ${SENDERS} concurrent senders, ${SECONDS} s each, ${Buffer.byteLength(raw('x'))} byte messages`);
  console.log(line('bare smtp-server (read, discard)', baseline));
  console.log(line('inbound listener (stored)', ours));
  console.log(line('listener + workflows processing', processing));
  console.log(`  ${accepted} messages accepted under processing, all threaded and stored ${drainedSeconds.toFixed(1)} s after the load began: ${(accepted / drainedSeconds).toFixed(0)} msg/s end to end`);
  await dns.close();
  blobs.close();
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
