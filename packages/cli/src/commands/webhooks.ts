import type { Command } from 'commander';
import { type components, type MessagingClient, MessagingApiError, unwrap } from '@messaging-backend/client';
import { contextFor } from '../context';
import { type Output, paintStatus } from '../output';
import { clock, positiveNumber, sleep } from '../wait';

type Webhook = components['schemas']['Webhook'];
type Delivery = components['schemas']['WebhookDelivery'];
type Attempt = components['schemas']['WebhookAttempt'];

interface TailOptions {
  endpoint?: string;
  interval: number;
  history?: boolean;
}

/** The newest deliveries read per endpoint and round: more than a busy second brings at the default interval. */
const PAGE = 100;

export function registerWebhooks(program: Command, env: NodeJS.ProcessEnv): void {
  const webhooks = program.command('webhooks').description('Webhook endpoints and their deliveries');

  webhooks
    .command('tail')
    .description('Print each webhook delivery attempt as it finishes, until Ctrl-C')
    .option('--endpoint <id>', 'only this webhook (else every webhook of the workspace, new ones included)')
    .option('--interval <ms>', 'time between two reads', positiveNumber, 1000)
    .option('--history', 'print the recent attempts already logged before following')
    .action(async (options: TailOptions, command: Command) => {
      const { client, output } = contextFor(command, env);
      // An attempt is printed once it has an outcome; a pending one is printed when it settles.
      const printed = new Set<string>();
      let first = true;
      for (;;) {
        const endpoints = await endpointsToRead(client, options.endpoint);
        for (const endpoint of endpoints) {
          const deliveries = await recentDeliveries(client, endpoint.id, options.endpoint === undefined);
          if (!deliveries) continue;
          // Newest first from the API; oldest first on screen, as a log reads.
          for (const delivery of [...deliveries].reverse()) {
            for (const attempt of delivery.attempts) {
              const key = `${delivery.id}:${attempt.attempt}`;
              if (attempt.status === 'pending' || printed.has(key)) continue;
              printed.add(key);
              if (!first || options.history) printAttempt(output, endpoint, delivery, attempt);
            }
          }
        }
        if (first && !output.json) {
          output.note(output.color.dim(`following deliveries of ${endpoints.length} webhook${endpoints.length === 1 ? '' : 's'} (Ctrl-C to stop)`));
        }
        first = false;
        await sleep(options.interval);
      }
    });
}

/**
 * The endpoint's newest deliveries. Following every endpoint, one deleted between the list and this read is
 * skipped (null) rather than ending the tail; following one endpoint, its deletion is the error to show.
 */
async function recentDeliveries(client: MessagingClient, id: string, skipDeleted: boolean): Promise<Delivery[] | null> {
  try {
    return unwrap(await client.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: PAGE } } })).deliveries;
  } catch (error) {
    if (skipDeleted && error instanceof MessagingApiError && error.code === 'not_found') return null;
    throw error;
  }
}

async function endpointsToRead(client: MessagingClient, endpointId: string | undefined): Promise<Webhook[]> {
  if (endpointId) return [unwrap(await client.GET('/api/v1/webhooks/{id}', { params: { path: { id: endpointId } } })).webhook];
  return unwrap(await client.GET('/api/v1/webhooks')).webhooks;
}

function printAttempt(output: Output, endpoint: Webhook, delivery: Delivery, attempt: Attempt): void {
  if (output.json) {
    // The attempt is the line's subject; the delivery's other attempts had (or will have) lines of their own.
    const { id, event, status, statusCode, createdAt, error, nextAttemptAt } = delivery;
    return output.data({ webhookId: endpoint.id, url: endpoint.url, delivery: { id, event, status, statusCode, createdAt, error, nextAttemptAt }, attempt });
  }
  const { color } = output;
  const code = attempt.statusCode === null ? '---' : String(attempt.statusCode);
  const duration = attempt.durationMs === null ? '' : `${attempt.durationMs}ms`;
  output.line(
    [
      color.dim(clock(attempt.createdAt)),
      paintStatus(color, attempt.status, attempt.status.padEnd(9)),
      code,
      delivery.event.padEnd(22),
      `#${attempt.attempt}`.padEnd(3),
      duration.padStart(7),
      endpoint.url,
      color.dim(delivery.id),
      attempt.error ? color.red(attempt.error) : '',
    ].join('  ').trimEnd(),
  );
}
