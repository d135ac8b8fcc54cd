import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Redis } from 'ioredis';
import { type DestinationStream, pino } from 'pino';
import type { Sequelize } from 'sequelize';
import { type AppDeps, createApp } from '../../api/app';
import { KeyCache } from '../../api/http/key-cache';
import { createTracking, type Tracking } from '../../api/tracking/tracking';
import { connectTemporalForApi } from '../../temporal/connection';
import { type Config, loadConfig } from '../../core/config';
import { logRedaction } from '../../core/log-redaction';
import { onKeyRevocation } from '../../db/key-revocations';
import { findKeyOwnerByHash } from '../../db/repositories/api-keys';
import { closeRedis, createRedis, createSubscriber, redisReady } from '../../db/redis';
import { createAudiencePool } from '../../db/audience-session';
import { createSequelize } from '../../db/sequelize';
import { createTemplateRenderer, templateRendererOptions } from '../../infra/template-renderer';

export interface ApiHarness {
  url: string;
  config: Config;
  db: Sequelize;
  redis: Redis;
  /** The pixel and redirect hit buffer (tests flush it rather than wait for its timer). */
  tracking: Tracking;
  /** Sends a JSON request; `key` becomes the Bearer token. */
  call: (method: string, path: string, options?: { key?: string; body?: unknown; raw?: string }) => Promise<ApiResponse>;
  /** A caller under `/api/v1` that always sends this key: `api.as(key)('GET', '/contacts')`. */
  as: (key: string) => (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
  close: () => Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * The real API on an ephemeral port, with the test run's Postgres, Redis and Temporal (from the
 * environment `npm test` sets). Each test file makes its own and creates its own workspaces.
 */
export interface ApiExtras extends Pick<AppDeps, 'extend' | 'snsAgent' | 'attachmentFetch' | 'webhookFetch' | 'analyticsFetch' | 'analyticsSyncWaitMs'> {
  /** Receives every log line at info level and above, built as the API process builds its logger. */
  logStream?: DestinationStream;
}

export async function startApi(overrides: Partial<Record<keyof Config, string>> = {}, extras: ApiExtras = {}): Promise<ApiHarness> {
  const { logStream, ...appExtras } = extras;
  const config = loadConfig({ ...process.env, ...overrides });
  const db = createSequelize(config.DATABASE_URL, { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS });
  const audienceDb = createAudiencePool(config.DATABASE_URL, { size: config.AUDIENCE_POOL_SIZE, statementTimeoutMs: config.AUDIENCE_STATEMENT_TIMEOUT_MS });
  const redis = createRedis(config.REDIS_URL);
  const subscriber = createSubscriber(config.REDIS_URL);
  await redisReady(redis, 1_000);
  const temporal = connectTemporalForApi(config);
  const keyCache = new KeyCache((hash) => findKeyOwnerByHash(db, hash), config.API_KEY_CACHE_TTL_MS);
  // Not awaited: against an unreachable Redis the subscription would wait out ioredis' retries.
  void onKeyRevocation(subscriber, (hash) => keyCache.evict(hash)).catch(() => undefined);
  const templateRenderer = createTemplateRenderer({ ...templateRendererOptions(config), maxQueue: config.TEMPLATE_RENDER_MAX_QUEUE });
  const logger = logStream ? pino({ level: 'info', redact: logRedaction }, logStream) : pino({ level: 'silent' });
  const tracking = createTracking({ config, db, logger, redis });
  const app = createApp({ config, logger, db, audienceDb, redis, temporal, keyCache, templateRenderer, tracking, ...appExtras });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const call: ApiHarness['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.raw !== undefined || options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = options.raw ?? JSON.stringify(options.body);
    }
    const response = await fetch(`${url}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (the docs page): keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  return {
    url,
    config,
    db,
    redis,
    tracking,
    call,
    as: (key) => (method, path, body) => call(method, `/api/v1${path}`, { key, body }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await tracking.close();
      await Promise.allSettled([db.close(), audienceDb.close(), closeRedis(redis), closeRedis(subscriber), temporal.close(), templateRenderer.close()]);
    },
  };
}
