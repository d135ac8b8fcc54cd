import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import type { SMTPServer } from 'smtp-server';
import type { BlobStore } from '../../db/blob-store';
import { type AcceptedInboundMessage, startInboundMailWorkflows } from '../../workers/inbox/acceptance';
import { inboundLimits } from '../../workers/inbox/limits';
import { bounceIntake } from '../../workers/inbox/bounces';
import { returnPathTokens } from '../../core/bounces/return-path';
import { configKeyring } from '../../core/config';
import { macKeys } from '../../core/secrets';
import { createInboundSmtpServer, listenInboundSmtp } from '../../workers/inbox/smtp-server';
import type { TestDnsServer } from './dns-server';
import type { EmailStack } from './email-stack';

/**
 * The inbound SMTP listener on an ephemeral port beside an email stack, as `npm start` runs it: its hand-off
 * starts each accepted message's inbound-mail workflow on the stack's workers, and mail to a VERP return
 * path starts a bounce-mail workflow there. `handOff` replaces that (a test
 * of the outbox drain makes it fail, as when Temporal is away).
 */
export async function startInboundListener(options: {
  stack: EmailStack;
  client: Client;
  dns: TestDnsServer;
  blobs: BlobStore;
  handOff?: (accepted: readonly AcceptedInboundMessage[], start: () => Promise<void>) => Promise<void>;
}): Promise<{ server: SMTPServer; port: number }> {
  const { stack, client } = options;
  const start = (accepted: readonly AcceptedInboundMessage[]) =>
    startInboundMailWorkflows({ db: stack.api.db, client, taskQueuePrefix: stack.api.config.TASK_QUEUE_PREFIX }, accepted);
  const server = createInboundSmtpServer({
    db: stack.api.db,
    blobs: options.blobs,
    resolver: options.dns.resolver,
    mxHost: 'inbound.messaging.local',
    limits: { ...inboundLimits(stack.api.config), maxMessageBytes: 1024 * 1024, maxConnections: 50 },
    logger: pino({ level: 'silent' }),
    handOff: (accepted) => (options.handOff ? options.handOff(accepted, () => start(accepted)) : start(accepted)),
    closeTimeoutMs: 200,
    bounces: bounceIntake({
      blobs: options.blobs,
      client,
      taskQueuePrefix: stack.api.config.TASK_QUEUE_PREFIX,
      tokens: returnPathTokens(macKeys(configKeyring(stack.api.config))),
    }),
  });
  return { server, port: await listenInboundSmtp(server, '127.0.0.1', 0) };
}
