import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Sequelize } from 'sequelize';
import { outboxDepths } from '../db/repositories/outbox-depth';

export interface OutboxGaugeOptions {
  db: Sequelize;
  registry: Registry;
  logger: Logger;
  /** The channels the dispatcher delivers: each gets its message classes exported, at 0 when empty. */
  channels: readonly string[];
  /** How often the outboxes are sampled (one statement each time): every scrape reads the last sample. */
  intervalMs: number;
}

const MESSAGE_CLASSES = ['transactional', 'journey', 'campaign'] as const;

/** Prometheus's default scrape interval: a sample per scrape at most, and an age never more than this stale. */
export const OUTBOX_SAMPLE_MS = 15_000;

/** The outbox gauges, in the worker's registry. */
export function createOutboxGauges(registry: Registry) {
  const registers = [registry];
  const labelNames = ['class', 'channel'] as const;
  return {
    depth: new Gauge({ name: 'messaging_outbox_depth', help: 'Rows waiting in an outbox, by class (transactional, journey, campaign, webhook, inbound) and channel', labelNames, registers }),
    oldest: new Gauge({
      name: 'messaging_outbox_oldest_age_seconds',
      help: 'Age of the oldest row waiting in an outbox, by class and channel (0 when empty)',
      labelNames,
      registers,
    }),
  };
}

/**
 * The outboxes' depth and oldest age, per class, as gauges, sampled by the worker that runs the dispatchers.
 * Sampled on a timer, not on a scrape: a scrape must stay cheap however often Prometheus comes (and several
 * may), while the statement's cost follows the backlog (db/repositories/outbox-depth.ts). Every worker running
 * the dispatchers exports the same global figures; dashboards and alerts take the max over workers. Every
 * class is exported at 0 when empty, so an alert on it sees a value rather than no series. Labels: the class
 * and the channel, never a workspace (services/metrics/registry.ts).
 */
export function runOutboxGauges(options: OutboxGaugeOptions): { stop: () => Promise<void>; sample: () => Promise<void> } {
  const { depth, oldest } = createOutboxGauges(options.registry);
  const empty = [
    ...options.channels.flatMap((channel) => MESSAGE_CLASSES.map((dispatchClass) => ({ dispatchClass, channel }))),
    { dispatchClass: 'webhook', channel: '' },
    { dispatchClass: 'inbound', channel: '' },
  ];
  let failing = false;
  const sample = async () => {
    try {
      const found = await outboxDepths(options.db);
      for (const row of [...empty.map((item) => ({ ...item, depth: 0, oldestAgeSeconds: 0 })), ...found]) {
        const labels = { class: row.dispatchClass, channel: row.channel };
        depth.set(labels, row.depth);
        oldest.set(labels, row.oldestAgeSeconds ?? 0);
      }
      if (failing) options.logger.info('outbox gauges: sampling again');
      failing = false;
    } catch (err) {
      // The gauges keep their last sample; the dispatcher's own round logs say why the database is away.
      if (!failing) options.logger.warn({ err }, 'outbox gauges: sampling failed; keeping the last figures');
      failing = true;
    }
  };
  let current = sample();
  const timer = setInterval(() => {
    current = current.then(sample);
  }, options.intervalMs);
  timer.unref();
  return {
    sample: () => (current = current.then(sample)),
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
}
