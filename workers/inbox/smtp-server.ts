import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { ByteBudget } from '../../core/inbox/byte-budget';
import { returnPathTokenOf } from '../../core/bounces/return-path';
import { InboundAdmission } from './admission';
import { RecipientDirectory } from './recipients';
import {
  checkRecipient,
  declaredSize,
  type InboundSmtpOptions,
  isReply,
  type Listener,
  MAX_RECIPIENTS,
  receive,
  reply,
  type SmtpCallback,
  SPOOL_FULL,
  TRY_LATER,
} from './smtp-session';
import { countingRefusals } from './refusal-metrics';

/** What a listener keeps across its sessions, made once per server. */
export function listenerOf(options: InboundSmtpOptions): Listener {
  const { limits } = options;
  return {
    options,
    limits,
    recipients: options.recipients ?? new RecipientDirectory(options.db, 0),
    admission: new InboundAdmission(limits),
    budget: new ByteBudget(limits.maxBytesInFlight),
    transactions: new Map(),
    returnPaths: new Map(),
  };
}

/** CONNECT: the client address's connection and message limits (421, 450). */
export function admitConnection({ admission }: Listener, session: SMTPServerSession, callback: SmtpCallback): void {
  admission.admit(session.id, session.remoteAddress).then(
    (refusal) => callback(refusal && reply(refusal.code, refusal.text)),
    () => callback(reply(421, TRY_LATER)),
  );
}

/** MAIL FROM: a new transaction. */
export function startTransaction(listener: Listener, address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback): void {
  const { admission, budget, transactions, returnPaths } = listener;
  // A new transaction (after RSET or a previous message) starts with no recipients.
  transactions.set(session.id, []);
  returnPaths.set(session.id, []);
  admission.startMessage(session.remoteAddress).then(
    (refusal) => {
      if (refusal) return callback(reply(refusal.code, refusal.text));
      // A declared SIZE that cannot fit the spool now is refused before the body travels.
      callback(budget.fits(declaredSize(address) || 1) ? null : reply(452, SPOOL_FULL));
    },
    () => callback(reply(451, TRY_LATER)),
  );
}

/** RCPT TO: a VERP return path (bounce and complaint mail) or an inbox of ours. */
export function takeRecipient(listener: Listener, address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback): void {
  const { options, transactions, returnPaths } = listener;
  const token = options.bounces ? returnPathTokenOf(address.address) : null;
  if (token && options.bounces) {
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(reply(452, '4.5.3 Too many recipients'));
    // A made-up or altered return path is refused now, so a forged report never gets to DATA.
    if (!options.bounces.verify(token)) return callback(reply(550, '5.1.1 No such return path'));
    returnPaths.set(session.id, [...(returnPaths.get(session.id) ?? []), token]);
    return callback();
  }
  checkRecipient(listener, address, session).then(
    (recipient) => {
      transactions.set(session.id, [...(transactions.get(session.id) ?? []), recipient]);
      callback();
    },
    (error: unknown) => {
      if (isReply(error)) return callback(error);
      options.logger.error({ err: error, session: session.id }, 'inbound recipient check failed');
      callback(reply(451, TRY_LATER));
    },
  );
}

/** DATA: the message stored (then handed off) or refused with the reply that says why. */
export function takeData(listener: Listener, stream: Readable, session: SMTPServerSession, callback: SmtpCallback): void {
  const { options, budget } = listener;
  receive(listener, stream, session).then(
    (accepted) => {
      callback();
      options.handOff(accepted).catch((error: unknown) => {
        options.logger.warn({ err: error, accepted: accepted.map((message) => message.id) }, 'inbound hand-off failed; the outbox will start it');
      });
    },
    (error: unknown) => {
      if (isReply(error)) {
        // A full spool or a full workspace is capacity an operator should see; other refusals are the sender's.
        if (error.responseCode === 452) options.logger.warn({ session: session.id, reply: error.message, bytesInFlight: budget.inFlight }, 'inbound mail deferred');
        return callback(error);
      }
      options.logger.error({ err: error, session: session.id }, 'inbound mail could not be stored');
      callback(reply(451, TRY_LATER));
    },
  );
}

/** The session closed: what it held is let go. */
export function endSession({ admission, transactions, returnPaths }: Listener, session: SMTPServerSession): void {
  transactions.delete(session.id);
  returnPaths.delete(session.id);
  admission.leave(session.id);
}

/**
 * The inbound MX for inbound-enabled domains. Everything that can be decided before the message body is decided
 * at RCPT, so unwanted mail is refused in the session and never bounced later (no backscatter): a recipient that
 * is no inbox of ours is 550, a blocked envelope sender is 550. The From header is known only after DATA: a
 * From the rules refuse (or an allow list neither sender meets) is 550 there, still in the session. The size limit is announced
 * in EHLO and enforced at MAIL FROM (SIZE=) and during DATA (552). An accepted message is stored (blob and row)
 * before the 250; a storage failure answers 451 so the sender tries again.
 *
 * What one sender or one workspace can take is bounded (docs/inboxes.md, Limits): connections and messages per
 * client address (421, 450), DATA spooled to disk under a budget of bytes in flight for the whole process (452),
 * MIME parts and attachments per message (552), and each workspace's stored mail (452 4.2.2, 552 5.2.2).
 */
export function createInboundSmtpServer(options: InboundSmtpOptions): SMTPServer {
  const { limits } = options;
  const listener = listenerOf(options);
  const server = new SMTPServer({
    name: options.mxHost,
    banner: 'inbound mail',
    size: limits.maxMessageBytes,
    maxClients: limits.maxConnections,
    // An MX takes mail for its own domains from anyone: no AUTH; STARTTLS only when there is a certificate.
    authOptional: true,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    logger: false,
    closeTimeout: options.closeTimeoutMs ?? 30_000,
    // Each refusal is counted by its stage and reason class (messaging_inbound_smtp_refusals_total).
    onConnect: (session, callback: SmtpCallback) => admitConnection(listener, session, countingRefusals('connect', callback)),
    onMailFrom: (address, session, callback: SmtpCallback) => startTransaction(listener, address, session, countingRefusals('mail', callback)),
    onRcptTo: (address, session, callback: SmtpCallback) => takeRecipient(listener, address, session, countingRefusals('rcpt', callback)),
    onData: (stream, session, callback: SmtpCallback) => takeData(listener, stream, session, countingRefusals('data', callback)),
    onClose: (session) => endSession(listener, session),
  });
  server.on('error', (error) => options.logger.warn({ err: error }, 'inbound SMTP connection error'));
  return server;
}

/** Listens and answers the bound port (an ephemeral one when `port` is 0). */
export function listenInboundSmtp(server: SMTPServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

export function closeInboundSmtp(server: SMTPServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
