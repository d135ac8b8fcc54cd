import { collectDefaultMetrics, Registry } from 'prom-client';
import { pino } from 'pino';
import { loadConfig, tracesEndpoint } from '../core/config';
import { logRedaction } from '../core/log-redaction';
import { findKeyOwnerByHash } from '../db/repositories/api-keys';
import { onKeyRevocation } from '../db/key-revocations';
import { migrate } from '../db/migrate';
import { closeRedis, createRedis, createSubscriber, redisReady } from '../db/redis';
import { createAudiencePool } from '../db/audience-session';
import { createSequelize } from '../db/sequelize';
import { createTemplateRenderer, templateRendererOptions } from '../infra/template-renderer';
import { createApp } from './app';
import { KeyCache } from './http/key-cache';
import { createTracking } from './tracking/tracking';
import { startTracing } from '../infra/tracing';
import { connectTemporalForApi, traceWorkflowClients } from '../temporal/connection';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, base: { process: 'api' }, redact: logRedaction });
  // Before the app and the Temporal client are made: both ask whether tracing is on (docs/observability.md, Traces).
  const tracing = await startTracing(config, 'api');
  if (tracing) {
    await traceWorkflowClients(true);
    logger.info({ traces: tracesEndpoint(config) }, 'tracing on');
  }
  if (config.MIGRATE_ON_START) {
    // On a pool of its own: a migration may rightly run longer than the API's statement timeout.
    const migrations = createSequelize(config.DATABASE_URL);
    try {
      const applied = await migrate(migrations);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    } finally {
      await migrations.close();
    }
  }
  const db = createSequelize(config.DATABASE_URL, { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS });
  const audienceDb = createAudiencePool(config.DATABASE_URL, { size: config.AUDIENCE_POOL_SIZE, statementTimeoutMs: config.AUDIENCE_STATEMENT_TIMEOUT_MS });
  const redis = createRedis(config.REDIS_URL);
  // While Redis is away, requests degrade (see createRedis); the reconnect errors are worth a warning each.
  redis.on('error', (err: Error) => logger.warn({ err }, 'Redis connection error'));
  const subscriber = createSubscriber(config.REDIS_URL);
  // Serving before Redis connects would count the first requests' rate limits per process only.
  if (!(await redisReady(redis, 5_000))) {
    logger.warn('Redis is unreachable; rate limits count per process until it answers');
  }
  const temporal = connectTemporalForApi(config);
  const keyCache = new KeyCache((hash) => findKeyOwnerByHash(db, hash), config.API_KEY_CACHE_TTL_MS);
  const logRedisError = (err: Error) => logger.warn({ err }, 'Redis subscriber connection error');
  onKeyRevocation(subscriber, (hash) => keyCache.evict(hash), logRedisError).catch((err: unknown) => {
    logger.warn({ err }, 'key revocation channel unavailable; cached keys expire by TTL');
  });

  // Previews only, here: their queue is bounded, so a flood of them is refused instead of waiting without end.
  const templateRenderer = createTemplateRenderer({ ...templateRendererOptions(config, logger), maxQueue: config.TEMPLATE_RENDER_MAX_QUEUE });
  const tracking = createTracking({ config, db, logger, redis });
  const processMetrics = new Registry();
  collectDefaultMetrics({ register: processMetrics });
  const app = createApp({ config, logger, db, audienceDb, redis, temporal, keyCache, templateRenderer, tracking, processMetrics });
  const server = app.listen(config.PORT, () => {
    logger.info({ port: config.PORT, docs: `${config.PUBLIC_BASE_URL}/api/v1/docs` }, 'api listening');
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining HTTP connections');
    setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS).unref();
    server.close(async () => {
      // Hits buffered up to the last request are written before the database goes.
      await tracking.close();
      await Promise.allSettled([db.close(), audienceDb.close(), closeRedis(redis), closeRedis(subscriber), temporal.close(), templateRenderer.close(), tracing?.shutdown()]);
      logger.info('api stopped');
      process.exit(0);
    });
    // Idle keep-alive sockets would hold close() open until they time out.
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
