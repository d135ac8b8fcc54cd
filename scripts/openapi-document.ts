/**
 * Prints the OpenAPI document the API serves at /api/v1/openapi.json, without a running service: the app is
 * built on connections that are never opened (nothing is queried while routes are registered). The typed
 * client is generated from this output (`npm run client:generate`), and its sync test compares against it.
 *
 *   tsx scripts/openapi-document.ts [out.json]
 */
import { writeFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createApp } from '../api/app';
import { KeyCache } from '../api/http/key-cache';
import { createTracking } from '../api/tracking/tracking';
import { loadConfig } from '../core/config';
import { createSequelize } from '../db/sequelize';
import { createTemplateRenderer, templateRendererOptions } from '../infra/template-renderer';
import { type BlobStore } from '../db/blob-store';

/** The servers entry is the public base URL, which differs per deployment; the generated client takes its own. */
const DOCUMENT_BASE_URL = 'http://localhost:3000';

export async function openApiDocument(): Promise<object> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: DOCUMENT_BASE_URL });
  const logger = pino({ level: 'silent' });
  const db = createSequelize(config.DATABASE_URL);
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, enableOfflineQueue: false });
  // Never asked anything here; a connection some route helper opens may fail without mattering.
  redis.on('error', () => undefined);
  const temporal = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const templateRenderer = createTemplateRenderer(templateRendererOptions(config, logger));
  const tracking = createTracking({ config, db, logger, redis });
  const blobs = { ensureBucket: async () => undefined } as unknown as BlobStore;
  const app = createApp({
    config, logger, db, audienceDb: db, redis, temporal, keyCache: new KeyCache(async () => null, 1_000), templateRenderer, tracking, blobs,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`openapi.json answered ${response.status}`);
    return (await response.json()) as object;
  } finally {
    server.close();
    await Promise.allSettled([tracking.close(), templateRenderer.close(), db.close(), temporal.close()]);
    redis.disconnect();
  }
}

if (require.main === module) {
  openApiDocument()
    .then((document) => {
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (process.argv[2]) writeFileSync(process.argv[2], text);
      else process.stdout.write(text);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
