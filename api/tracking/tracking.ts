import type { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { type Config, configKeyring } from '../../core/config';
import { macKeys } from '../../core/secrets';
import { trackingKeys } from '../../core/tracking/tokens';
import { findTrackedMessage } from '../../db/repositories/message-links';
import { recordTrackingEvents } from '../../db/repositories/tracking-events';
import { ClientLimit } from '../http/client-limits';
import { TrackingHitBuffer } from './hit-buffer';
import { createHitGate } from './hit-gate';
import { TrackedMessageCache } from './message-cache';
import { trackingRoutes } from './routes';

/** The public tracking endpoints with the buffer behind them; whoever creates it closes it (flushing every hit). */
export interface Tracking {
  router: Router;
  buffer: TrackingHitBuffer;
  close: () => Promise<void>;
}

export function createTracking(deps: { config: Config; db: Sequelize; logger: Logger; redis: Redis }): Tracking {
  const { config, db, redis } = deps;
  const buffer = new TrackingHitBuffer({
    write: (events) => recordTrackingEvents(db, events),
    logger: deps.logger,
    flushIntervalMs: config.TRACKING_FLUSH_INTERVAL_MS,
  });
  const messages = new TrackedMessageCache((messageId) => findTrackedMessage(db, messageId));
  const gate = createHitGate({ redis, limit: new ClientLimit(redis, 'tracking', config.TRACKING_PER_IP_PER_MINUTE), replayWindowMs: config.TRACKING_REPLAY_WINDOW_MS });
  const router = trackingRoutes({ keys: trackingKeys(macKeys(configKeyring(config))), messages, hits: buffer, gate });
  return { router, buffer, close: () => buffer.close(config.SHUTDOWN_TIMEOUT_MS / 2) };
}
