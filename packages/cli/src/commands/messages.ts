import type { Command } from 'commander';
import { type components, unwrap } from '@messaging-backend/client';
import { contextFor } from '../context';
import { CliError, EXIT } from '../errors';
import { type Output, paintStatus } from '../output';
import { clock, positiveNumber, sleep } from '../wait';

type MessageEvent = components['schemas']['MessageEvent'];

/**
 * Where a message's delivery ends (decisions.md, message lifecycle). `sent` means the provider accepted it: with
 * SMTP nothing more comes, so following ends there unless --until-delivered asks to wait for the provider's word.
 */
const GOOD_ENDS = ['sent', 'delivered'];
const BAD_ENDS = ['failed', 'bounced', 'complained', 'canceled'];

interface FollowOptions {
  interval: number;
  timeout: number;
  untilDelivered?: boolean;
}

export function registerMessages(program: Command, env: NodeJS.ProcessEnv): void {
  const messages = program.command('messages').description('Read messages of any channel');

  messages
    .command('follow')
    .description('Print each status change and event of a message until it ends (exit 0 sent/delivered, 2 failed/bounced/complained/canceled)')
    .argument('<id>', 'the message id (from send)')
    .option('--interval <ms>', 'time between two reads', positiveNumber, 1000)
    .option('--timeout <seconds>', 'give up (exit 1) when it has not ended by then', positiveNumber, 600)
    .option('--until-delivered', 'do not stop at sent: wait for delivered, a bounce or a failure')
    .action(async (id: string, options: FollowOptions, command: Command) => {
      const { client, output } = contextFor(command, env);
      const ends = options.untilDelivered ? ['delivered', ...BAD_ENDS] : [...GOOD_ENDS, ...BAD_ENDS];
      const seen = new Set<string>();
      let status: string | null = null;
      if (!output.json) output.note(output.color.dim(`following ${id} (Ctrl-C to stop)`));
      for (const deadline = Date.now() + options.timeout * 1000; ; await sleep(options.interval)) {
        const message = unwrap(await client.GET('/api/v1/messages/{id}', { params: { path: { id } } }));
        // Events first: a message read as sent already carries its sent event, which belongs before the end line.
        for (const event of message.events) {
          const key = eventKey(event);
          if (seen.has(key)) continue;
          seen.add(key);
          printEvent(output, event);
        }
        if (message.status !== status) {
          status = message.status;
          printStatus(output, status, message.channel);
        }
        if (ends.includes(status)) {
          if (BAD_ENDS.includes(status)) process.exitCode = EXIT.negative;
          return;
        }
        if (Date.now() >= deadline) throw new CliError(`message ${id} is still ${status} after ${options.timeout}s`, EXIT.error, 'timeout');
      }
    });
}

/** Events carry no id: type, time and link tell two apart (two clicks on one link in one millisecond are one line). */
function eventKey(event: MessageEvent): string {
  return [event.type, event.createdAt, event.linkUrl ?? '', event.classification ?? ''].join('|');
}

function printEvent(output: Output, event: MessageEvent): void {
  if (output.json) return output.data({ type: 'event', event });
  const details = [
    event.classification && `(${event.classification})`,
    event.bounceType && `${event.bounceType} bounce`,
    event.linkUrl,
    event.reason,
  ].filter(Boolean);
  output.line(`${output.color.dim(clock(event.createdAt))}  event   ${paintStatus(output.color, event.type)}${details.length ? `  ${details.join('  ')}` : ''}`);
}

function printStatus(output: Output, status: string, channel: string): void {
  if (output.json) return output.data({ type: 'status', status, channel, at: new Date().toISOString() });
  output.line(`${output.color.dim(clock(new Date()))}  status  ${output.color.bold(paintStatus(output.color, status))}`);
}
