import { domainToASCII } from 'node:url';
import type { DNSResolver } from 'mailauth';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { decideSender } from '../core/inbound/rules';
import type { BlobStore } from '../db/blob-store';
import { findMailbox, listEmailRules } from '../db/repositories/inbound-mail';
import { acceptInboundMail, type AcceptedInboundMessage, type AcceptedRecipient } from './inbound-acceptance';

export interface InboundSmtpOptions {
  db: Sequelize;
  blobs: BlobStore;
  resolver: DNSResolver;
  /** Our name in the greeting and in the authentication results (INBOUND_MX_HOST). */
  mxHost: string;
  maxMessageBytes: number;
  /** Connections held at once; the next is answered 421 (INBOUND_MAX_CONNECTIONS). */
  maxConnections: number;
  /** PEM certificate and key: STARTTLS is offered only with them. */
  tls?: { cert: Buffer; key: Buffer };
  logger: Logger;
  /** Called with what was stored, after it was stored; its failure is logged, the mail stays accepted. */
  handOff: (accepted: readonly AcceptedInboundMessage[]) => Promise<void>;
  /** How long close() waits for open connections (smtp-server's default is 30 s). */
  closeTimeoutMs?: number;
}

/** RFC 5321 §4.5.3.1.8 asks servers to take at least 100 recipients; more in one transaction is refused with 452. */
const MAX_RECIPIENTS = 100;

type SmtpCallback = (error?: Error | null) => void;

const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

/**
 * The inbound MX for inbound-enabled domains. Everything that can be decided before the message body is decided
 * at RCPT, so unwanted mail is refused in the session and never bounced later (no backscatter): a recipient that
 * is no inbox of ours is 550, a sender the recipient workspace's rules refuse is 550. The size limit is announced
 * in EHLO and enforced at MAIL FROM (SIZE=) and during DATA (552). An accepted message is stored (blob and row)
 * before the 250; a storage failure answers 451 so the sender tries again.
 */
export function createInboundSmtpServer(options: InboundSmtpOptions): SMTPServer {
  // The recipients accepted in each session's current transaction, with whose inbox each one is.
  const transactions = new Map<string, AcceptedRecipient[]>();
  const senderOf = (session: SMTPServerSession) => (session.envelope.mailFrom && session.envelope.mailFrom.address) || null;

  async function checkRecipient(address: SMTPServerAddress, session: SMTPServerSession): Promise<AcceptedRecipient> {
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw reply(452, '4.5.3 Too many recipients');
    const at = address.address.lastIndexOf('@');
    const localPart = at > 0 ? address.address.slice(0, at) : '';
    const domain = at > 0 ? domainToASCII(address.address.slice(at + 1).replace(/\.$/, '').toLowerCase()) : '';
    const mailbox = localPart && domain ? await findMailbox(options.db, localPart, domain) : { kind: 'not_ours' as const };
    if (mailbox.kind === 'not_ours') throw reply(550, '5.7.1 Relaying denied: this server takes no mail for that domain');
    if (mailbox.kind === 'unknown_mailbox') throw reply(550, '5.1.1 No such mailbox');
    const verdict = decideSender(await listEmailRules(options.db, mailbox.workspaceId), senderOf(session));
    if (!verdict.accepted) {
      throw reply(550, verdict.reason === 'blocked' ? '5.7.1 Sender blocked by the recipient' : '5.7.1 Sender not accepted by the recipient');
    }
    return { workspaceId: mailbox.workspaceId, inboxId: mailbox.inboxId, address: address.address };
  }

  const server = new SMTPServer({
    name: options.mxHost,
    banner: 'inbound mail',
    size: options.maxMessageBytes,
    maxClients: options.maxConnections,
    // An MX takes mail for its own domains from anyone: no AUTH; STARTTLS only when there is a certificate.
    authOptional: true,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    logger: false,
    closeTimeout: options.closeTimeoutMs ?? 30_000,

    onMailFrom(_address, session, callback: SmtpCallback) {
      // A new transaction (after RSET or a previous message) starts with no recipients.
      transactions.set(session.id, []);
      callback();
    },

    onRcptTo(address, session, callback: SmtpCallback) {
      checkRecipient(address, session).then(
        (recipient) => {
          transactions.set(session.id, [...(transactions.get(session.id) ?? []), recipient]);
          callback();
        },
        (error: unknown) => {
          if (error instanceof Error && 'responseCode' in error) return callback(error);
          options.logger.error({ err: error, session: session.id }, 'inbound recipient check failed');
          callback(reply(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },

    onData(stream, session, callback: SmtpCallback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Past the limit the rest is read (the protocol needs it) but not kept.
        if (size <= options.maxMessageBytes) chunks.push(chunk);
      });
      stream.on('end', () => {
        const recipients = transactions.get(session.id) ?? [];
        transactions.set(session.id, []);
        if (stream.sizeExceeded || size > options.maxMessageBytes) {
          return callback(reply(552, `5.3.4 Message exceeds the maximum size of ${options.maxMessageBytes} bytes`));
        }
        if (!recipients.length) return callback(reply(503, '5.5.1 No valid recipients'));
        const sender = { ip: session.remoteAddress, helo: session.hostNameAppearsAs || session.clientHostname, envelopeFrom: senderOf(session) };
        acceptInboundMail({ db: options.db, blobs: options.blobs, resolver: options.resolver, mta: options.mxHost }, { raw: Buffer.concat(chunks), recipients, sender }).then(
          (accepted) => {
            callback();
            options.handOff(accepted).catch((error: unknown) => {
              options.logger.warn({ err: error, accepted: accepted.map((message) => message.id) }, 'inbound hand-off failed; the outbox will start it');
            });
          },
          (error: unknown) => {
            options.logger.error({ err: error, session: session.id }, 'inbound mail could not be stored');
            callback(reply(451, '4.3.0 Temporary failure, try again later'));
          },
        );
      });
    },

    onClose(session) {
      transactions.delete(session.id);
    },
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
