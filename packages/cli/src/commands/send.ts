import { type Command, InvalidArgumentError, Option } from 'commander';
import { unwrap } from '@messaging-backend/client';
import { contextFor, type CliContext } from '../context';
import { CliError } from '../errors';
import { paintStatus } from '../output';

const CHANNELS = ['email', 'whatsapp', 'telegram'] as const;

/** Repeatable flags collect into an array (`--to a --to b`); a comma list in one value stays one value, as the API parses it. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--var name=Ann --var plan=pro` → `{ name: 'Ann', plan: 'pro' }`. */
function variables(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined;
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new CliError(`--var takes name=value, not "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

interface EmailOptions {
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string[];
  subject?: string;
  text?: string;
  html?: string;
  template?: string;
  var?: string[];
  idempotencyKey?: string;
}

interface MessageOptions {
  channel?: (typeof CHANNELS)[number];
  to?: string;
  contact?: string;
  from?: string;
  subject?: string;
  text?: string;
  html?: string;
  template?: string;
  var?: string[];
  fallback?: Array<(typeof CHANNELS)[number]>;
  idempotencyKey?: string;
}

export function registerSend(program: Command, env: NodeJS.ProcessEnv): void {
  const send = program.command('send').description('Send a test email or message');

  send
    .command('email')
    .description('Send one email (POST /emails)')
    .requiredOption('--from <address>', 'sender on a verified domain: "Name <a@b.c>" or an address')
    .requiredOption('--to <address>', 'recipient; repeat for more, or a comma list', collect)
    .option('--cc <address>', 'copy; repeatable', collect)
    .option('--bcc <address>', 'hidden copy; repeatable', collect)
    .option('--reply-to <address>', 'reply address; repeatable', collect)
    .option('--subject <text>', 'subject (a template may supply it)')
    .option('--text <text>', 'plain-text body (alone: a text-only email)')
    .option('--html <html>', 'HTML body')
    .option('--template <id-or-name>', 'a template instead of --html')
    .option('--var <name=value>', 'template variable; repeatable', collect)
    .option('--idempotency-key <key>', 'repeat a send safely: the same key never sends twice (one is made when absent)')
    .action(async (options: EmailOptions, command: Command) => {
      const context = contextFor(command, env);
      if (!options.text && !options.html && !options.template) throw new CliError('give --text, --html or --template');
      const result = unwrap(
        await context.client.POST('/api/v1/emails', {
          body: {
            from: options.from,
            to: options.to.length === 1 ? options.to[0] : options.to,
            ...(options.cc && { cc: options.cc }),
            ...(options.bcc && { bcc: options.bcc }),
            ...(options.replyTo && { replyTo: options.replyTo }),
            ...(options.subject !== undefined && { subject: options.subject }),
            ...(options.text !== undefined && { text: options.text }),
            ...(options.html !== undefined && { html: options.html }),
            ...(options.template && { templateId: options.template }),
            ...(options.var && { variables: variables(options.var) }),
            // Absent, the client makes one; either way the answer carries it and the CLI prints it.
            ...(options.idempotencyKey && { idempotencyKey: options.idempotencyKey }),
          },
        }),
      );
      printAccepted(context, result);
    });

  send
    .command('message')
    .description('Send one message on email, WhatsApp or Telegram (POST /messages)')
    .addOption(new Option('--channel <channel>', 'the channel (else the contact\'s primary identity picks it)').choices(CHANNELS))
    .option('--to <recipient>', 'email address, E.164 phone number (whatsapp) or chat id (telegram)')
    .option('--contact <id>', 'the contact the message is for')
    .option('--from <address>', 'email only: sender (else the workspace default)')
    .option('--subject <text>', 'email only: subject')
    .option('--text <text>', 'the chat text; the email plain-text part')
    .option('--html <html>', 'email HTML body')
    .option('--template <id-or-name>', 'a template instead of text')
    .option('--var <name=value>', 'template variable; repeatable', collect)
    .option('--fallback <channel>', 'channel to try next when this one fails for good; repeatable', collectChannel)
    .option('--idempotency-key <key>', 'repeat a send safely: the same key never sends twice (one is made when absent)')
    .action(async (options: MessageOptions, command: Command) => {
      const context = contextFor(command, env);
      if (!options.to && !options.contact) throw new CliError('give --to (with --channel) or --contact');
      if (!options.text && !options.html && !options.template) throw new CliError('give --text, --html or --template');
      const result = unwrap(
        await context.client.POST('/api/v1/messages', {
          body: {
            ...(options.channel && { channel: options.channel }),
            ...(options.to && { to: options.to }),
            ...(options.contact && { contactId: options.contact }),
            ...(options.from && { from: options.from }),
            ...(options.subject !== undefined && { subject: options.subject }),
            ...(options.text !== undefined && { text: options.text }),
            ...(options.html !== undefined && { html: options.html }),
            ...(options.template && { templateId: options.template }),
            ...(options.var && { variables: variables(options.var) }),
            ...(options.fallback && { fallbackChain: options.fallback }),
            ...(options.idempotencyKey && { idempotencyKey: options.idempotencyKey }),
          },
        }),
      );
      printAccepted(context, result);
    });
}

function collectChannel(value: string, previous: Array<(typeof CHANNELS)[number]> = []): Array<(typeof CHANNELS)[number]> {
  const channel = CHANNELS.find((known) => known === value);
  if (!channel) throw new InvalidArgumentError(`Allowed choices are ${CHANNELS.join(', ')}.`);
  return [...previous, channel];
}

interface Accepted {
  id: string;
  status: string;
  idempotencyKey?: string;
  channel?: string;
  bodyMismatch?: boolean;
  /** Copies left out because the address is suppressed (bounce, complaint, unsubscribe). */
  droppedRecipients?: Array<{ address: string; reason: string }>;
}

function printAccepted({ output }: CliContext, accepted: Accepted): void {
  if (output.json) return output.data(accepted);
  output.fields([
    ['id', accepted.id],
    ['status', paintStatus(output.color, accepted.status)],
    ...(accepted.channel ? [['channel', accepted.channel] as [string, string]] : []),
    ['idempotency key', accepted.idempotencyKey],
    ...(accepted.droppedRecipients?.length
      ? [['dropped', output.color.yellow(accepted.droppedRecipients.map((dropped) => `${dropped.address} (${dropped.reason})`).join(', '))] as [string, string]]
      : []),
  ]);
  if (accepted.status === 'duplicate') {
    output.note(output.color.yellow(`already accepted under this key${accepted.bodyMismatch ? ' with a different body' : ''}: nothing new was sent`));
  }
  output.note(output.color.dim(`follow it: messaging messages follow ${accepted.id}`));
}
