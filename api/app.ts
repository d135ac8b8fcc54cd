import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import express, { type Express, type RequestHandler, Router } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Sequelize } from 'sequelize';
import swaggerUi from 'swagger-ui-express';
import type { Config } from '../core/config';
import { apiKeyRoutes } from './api-keys/routes';
import { createApiKeyService } from './api-keys/service';
import { healthRoutes } from './health/routes';
import { authenticate, type KeyCache } from './http/auth';
import { notFoundRoute, renderErrors } from './http/errors';
import { createHttpMetrics } from './http/metrics';
import { createOpenApiRegistry, generateOpenApiDocument } from './http/openapi';
import { rateLimitPerKey } from './http/rate-limit';
import { RouteTable } from './http/route';
import { usageRoutes } from './usage/routes';

export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Sequelize;
  redis: Redis;
  temporal: Connection;
  keyCache: KeyCache;
  /** Mounts extra keyed routes before the 404 handler (benchmarks measure the edge with it). */
  extend?: (api: Router, edge: RequestHandler[]) => void;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export function createApp(deps: AppDeps): Express {
  const { config, db, redis } = deps;
  const app = express();
  app.disable('x-powered-by');

  app.use(
    pinoHttp({
      logger: deps.logger,
      // A caller's own request id is kept (when sane) so logs join across services.
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
    }),
  );
  const metrics = createHttpMetrics();
  app.use(metrics.observe);

  healthRoutes(app, { db, redis, temporal: deps.temporal });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const api = Router();
  const edge = [authenticate(deps.keyCache), rateLimitPerKey(redis, config.RATE_LIMIT_PER_SECOND)];
  const registry = createOpenApiRegistry();
  const parseBody = express.json({ limit: config.MAX_BODY_BYTES });
  const table = (tag: string) => new RouteTable({ router: api, registry, edge, parseBody }, tag);

  const keys = createApiKeyService({ db, redis, evictLocally: (hash) => deps.keyCache.evict(hash) });
  apiKeyRoutes(table('API keys'), keys);
  usageRoutes(table('Usage'), db);
  deps.extend?.(api, edge);

  const document = generateOpenApiDocument(registry, `${config.PUBLIC_BASE_URL}`);
  api.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  api.use('/docs', swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: 'Messaging API reference' }));

  app.use('/api/v1', api);
  app.use(notFoundRoute);
  app.use(renderErrors);
  return app;
}
