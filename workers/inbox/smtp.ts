import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createDnsResolve } from '../../activities/dns-lookup';
import { configKeyring, loadConfig } from '../../core/config';
import { logRedaction } from '../../core/log-redaction';
import { blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { createSequelize } from '../../db/sequelize';
import { lazyTemporalClient } from '../../temporal/connection';
import { startInboundMailWorkflows } from './acceptance';
import { bounceIntake } from './bounces';
import { macKeys } from '../../core/secrets';
import { returnPathTokens } from '../../core/bounces/return-path';
import { inboundLimits } from './limits';
import { listenForRecipientChanges, RecipientDirectory } from './recipients';
import { startMetricsServer } from '../metrics-server';
import { closeInboundSmtp, createInboundSmtpServer, listenInboundSmtp } from './smtp-server';

/**
 * The inbound SMTP process (`npm start` runs it beside the API and the worker): the MX of inbound-enabled
 * domains on INBOUND_SMTP_HOST:INBOUND_SMTP_PORT. On SIGTERM it stops taking connections and lets the open
 * sessions finish, within SHUTDOWN_TIMEOUT_MS.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, base: { process: 'inbound' }, redact: logRedaction });
  const db = createSequelize(config.DATABASE_URL);
  const blobs = createBlobStore(blobStoreOptions(config));
  // Lazy: the listener takes mail while Temporal is still starting or away; the outbox covers the gap.
  const client = lazyTemporalClient(config);
  const tls = config.INBOUND_TLS_CERT_PATH && config.INBOUND_TLS_KEY_PATH
    ? { cert: readFileSync(config.INBOUND_TLS_CERT_PATH), key: readFileSync(config.INBOUND_TLS_KEY_PATH) }
    : undefined;
  const limits = inboundLimits(config);
  // A directory of this process's own: its files are only ever its sessions', and it goes away at shutdown
  // (after a crash, an `inbound-*` directory older than any session can be removed).
  const spoolDir = await mkdtemp(join(limits.spoolDir, 'inbound-'));
  // On every way out, a crash included ('exit' runs then too, and only synchronous work does).
  process.once('exit', () => rmSync(spoolDir, { recursive: true, force: true }));
  const recipients = new RecipientDirectory(db, config.INBOUND_RECIPIENT_CACHE_TTL_MS);
  const changes = listenForRecipientChanges(config.DATABASE_URL, recipients, logger);
  const server = createInboundSmtpServer({
    db,
    blobs,
    resolver: createDnsResolve({ servers: config.DNS_SERVERS }),
    mxHost: config.INBOUND_MX_HOST,
    limits: { ...limits, spoolDir },
    recipients,
    tls,
    logger,
    handOff: (accepted) => startInboundMailWorkflows({ db, client, taskQueuePrefix: config.TASK_QUEUE_PREFIX }, accepted),
    closeTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    bounces: bounceIntake({ blobs, client, taskQueuePrefix: config.TASK_QUEUE_PREFIX, tokens: returnPathTokens(macKeys(configKeyring(config))) }),
  });
  const port = await listenInboundSmtp(server, config.INBOUND_SMTP_HOST, config.INBOUND_SMTP_PORT);
  logger.info({ host: config.INBOUND_SMTP_HOST, port, starttls: Boolean(tls) }, 'inbound SMTP listening');
  // Its refusals by reason (workers/inbox/refusal-metrics.ts) and the process's own figures.
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const metricsServer = config.INBOUND_METRICS_PORT ? await startMetricsServer(metrics, config.INBOUND_METRICS_HOST, config.INBOUND_METRICS_PORT) : null;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'closing the inbound SMTP listener');
    closeInboundSmtp(server)
      .then(() => Promise.allSettled([changes.close(), db.close(), client.connection.close(), metricsServer?.close()]))
      .then(() => {
        blobs.close();
        process.exit(0);
      }, () => process.exit(1));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
