import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { Config } from '../core/config';
import { type DispatchClass, type DispatchedMessage, inFlightBounds, type InFlightSettings, minimumClaim } from '../core/dispatch';
import { inLanes } from '../core/lanes';
import { claimFairly, markDispatched } from '../db/repositories/dispatch-queue';
import { startSendBatchWorkflow, startSendWorkflow } from '../workflows/starts';

export interface DispatcherOptions {
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** Each channel the engine delivers, with what its provider takes. */
  channels: Array<{ channel: string } & InFlightSettings>;
  /** Time between rounds when nothing was waiting or everything was in flight. */
  intervalMs: number;
}

/**
 * The channels the engine delivers and what their providers take, from the configuration. Each channel
 * has its own bound and its own fair pick between workspaces, so a WhatsApp backlog never holds an email
 * back. The chat channels' rates are one sender's (Twilio) or one bot's (Telegram): a conservative bound
 * when several workspaces send at once, each at its own sender's rate.
 */
export function dispatcherChannels(config: Config): DispatcherOptions['channels'] {
  const shared = {
    leadTimeMs: config.SEND_LEAD_TIME_MS,
    bulkLeadTimeMs: config.BULK_LEAD_TIME_MS,
    batchSize: config.BULK_BATCH_SIZE,
    minimum: config.SEND_IN_FLIGHT_MIN,
    maximum: config.SEND_IN_FLIGHT_MAX,
  };
  return [
    { channel: 'email', ratePerSecond: config.SEND_RATE_PER_SECOND, ...shared },
    { channel: 'whatsapp', ratePerSecond: config.WHATSAPP_RATE_PER_SECOND, ...shared },
    { channel: 'telegram', ratePerSecond: config.TELEGRAM_RATE_PER_SECOND, ...shared },
  ];
}

/** Long enough for a round of starts; a dispatcher that dies mid-round frees its rows after this. */
const LEASE_MS = 30_000;
/** Workflow starts awaited at once: Temporal answers each in a few ms, and a round is bounded anyway. */
const CONCURRENT_STARTS = 32;

/** Bulk messages of one workspace and kind travel together, in batches of at most `size`. */
function batchesOf(messages: readonly DispatchedMessage[], size: number): DispatchedMessage[][] {
  const groups = new Map<string, DispatchedMessage[]>();
  for (const message of messages) {
    const key = `${message.workspaceId}/${message.kind}/${message.campaignId ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(message);
    else groups.set(key, [message]);
  }
  return [...groups.values()].flatMap((group) => Array.from({ length: Math.ceil(group.length / size) }, (_, i) => group.slice(i * size, (i + 1) * size)));
}

/**
 * The delivery engine's dispatcher: the only way accepted messages reach Temporal. The outbox (Postgres) is
 * the queue; each round it hands Temporal no more than each channel's in-flight bound (what the provider
 * takes within a short lead time), picked fairly between workspaces and most urgent kind first, so a
 * million-message backlog costs Temporal nothing until the provider can take it, and never delays another
 * workspace's password reset. Safe on every worker: an advisory lock lets one claim at a time per channel
 * and class, and a workflow id never starts twice.
 */
export function runDispatcher(options: DispatcherOptions): { stop: () => Promise<void> } {
  let running = true;

  async function start(dispatchClass: DispatchClass, messages: DispatchedMessage[], batchSize: number): Promise<number> {
    const started: Array<{ messageId: string; workflowId: string }> = [];
    const units = dispatchClass === 'transactional' ? messages.map((message) => [message]) : batchesOf(messages, batchSize);
    await inLanes(units, CONCURRENT_STARTS, async (unit) => {
      try {
        const workflowId = dispatchClass === 'transactional'
          ? await startSendWorkflow(options.client, options.taskQueuePrefix, unit[0])
          : await startSendBatchWorkflow(options.client, options.taskQueuePrefix, unit);
        for (const message of unit) started.push({ messageId: message.messageId, workflowId });
      } catch (err) {
        // The lease keeps the rows until it ends; the next round after that starts them.
        options.logger.warn({ err, messageId: unit[0].messageId }, 'dispatcher: workflow start failed; retried when the lease ends');
      }
    });
    await markDispatched(options.db, started);
    return started.length;
  }

  async function round(): Promise<number> {
    let dispatched = 0;
    for (const channel of options.channels) {
      const bounds = inFlightBounds(channel);
      for (const dispatchClass of ['transactional', 'bulk'] as const) {
        const claimed = await claimFairly(options.db, {
          channel: channel.channel,
          dispatchClass,
          bound: bounds[dispatchClass],
          leaseMs: LEASE_MS,
          minimum: minimumClaim(dispatchClass, channel.batchSize),
        });
        if (claimed.length) dispatched += await start(dispatchClass, claimed, channel.batchSize);
      }
    }
    return dispatched;
  }

  const loop = (async () => {
    while (running) {
      let dispatched = 0;
      try {
        dispatched = await round();
        if (dispatched) options.logger.debug({ dispatched }, 'dispatcher: workflows started');
      } catch (err) {
        options.logger.warn({ err }, 'dispatcher: round failed; retrying');
      }
      // Something was handed over: there may be room for more at once (a round is bounded by capacity).
      if (!dispatched) await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
