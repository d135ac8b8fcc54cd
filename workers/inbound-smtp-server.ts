import { domainToASCII } from 'node:url';
import type { DNSResolver } from 'mailauth';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { parseMailboxes } from '../core/addresses';
import { headerBlockOf, headerValue } from '../core/inbound/header-block';
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

const REFUSALS = {
  blocked: '5.7.1 Sender blocked by the recipient',
  not_allowed: '5.7.1 Sender not accepted by the recipient',
} as const;

const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

/**
 * The inbound MX for inbound-enabled domains. Everything that can be decided before the message body is decided
 * at RCPT, so unwanted mail is refused in the session and never bounced later (no backscatter): a recipient that
 * is no inbox of ours is 550, a blocked envelope sender is 550. The From header is known only after DATA: a
 * From the rules refuse (or an allow list neither sender meets) is 550 there, still in the session. The size limit is announced
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
    // A blocked envelope sender is refused now; an allow list may still be met by the From header, read at DATA.
    const verdict = decideSender(await listEmailRules(options.db, mailbox.workspaceId), [senderOf(session)]);
    if (!verdict.accepted && verdict.reason === 'blocked') throw reply(550, REFUSALS.blocked);
    return { workspaceId: mailbox.workspaceId, inboxId: mailbox.inboxId, address: address.address };
  }

  /**
   * The recipients whose workspace's rules take the message, judged on the envelope sender and the From header
   * together (core/inbound/rules.ts). The rules are read again: one added since RCPT counts. A message to
   * several workspaces goes to those that take it; the session is refused only when none does.
   */
  async function recipientsWanting(recipients: readonly AcceptedRecipient[], senders: readonly (string | null)[]) {
    const verdicts = new Map<string, ReturnType<typeof decideSender>>();
    for (const workspaceId of new Set(recipients.map((recipient) => recipient.workspaceId))) {
      verdicts.set(workspaceId, decideSender(await listEmailRules(options.db, workspaceId), senders));
    }
    const refused = [...verdicts.values()].find((verdict) => !verdict.accepted);
    return {
      accepted: recipients.filter((recipient) => verdicts.get(recipient.workspaceId)?.accepted),
      refusal: refused && !refused.accepted ? refused.reason : null,
    };
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
        const raw = Buffer.concat(chunks);
        const sender = { ip: session.remoteAddress, helo: session.hostNameAppearsAs || session.clientHostname, envelopeFrom: senderOf(session) };
        const accept = async () => {
          const wanted = await recipientsWanting(recipients, [sender.envelopeFrom, ...fromAddressesOf(raw)]);
          if (!wanted.accepted.length) throw reply(550, REFUSALS[wanted.refusal ?? 'not_allowed']);
          return acceptInboundMail({ db: options.db, blobs: options.blobs, resolver: options.resolver, mta: options.mxHost }, { raw, recipients: wanted.accepted, sender });
        };
        accept().then(
          (accepted) => {
            callback();
            options.handOff(accepted).catch((error: unknown) => {
              options.logger.warn({ err: error, accepted: accepted.map((message) => message.id) }, 'inbound hand-off failed; the outbox will start it');
            });
          },
          (error: unknown) => {
            if (error instanceof Error && 'responseCode' in error) return callback(error);
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

/** The addresses of the From header, as far as they parse (an unreadable From names nobody). */
function fromAddressesOf(raw: Buffer): string[] {
  const from = headerValue(headerBlockOf(raw), 'from');
  const parsed = from ? parseMailboxes(from) : null;
  return parsed?.ok ? parsed.mailboxes.map((mailbox) => mailbox.address) : [];
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
