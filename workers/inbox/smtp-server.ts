import type { Readable } from 'node:stream';
import { domainToASCII } from 'node:url';
import type { DNSResolver } from 'mailauth';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { parseMailboxes } from '../../core/addresses';
import { headerBlockOf, headerValue } from '../../core/inbox/header-block';
import { ByteBudget } from '../../core/inbox/byte-budget';
import { decideSender } from '../../core/inbox/rules';
import type { BlobStore } from '../../db/blob-store';
import { inboundStorageUsed } from '../../db/repositories/inbox-storage';
import { returnPathTokenOf } from '../../core/bounces/return-path';
import { acceptInboundMail, type AcceptedInboundMessage, type AcceptedRecipient } from './acceptance';
import type { BounceIntake } from './bounces';
import { InboundAdmission } from './admission';
import type { InboundLimits } from './limits';
import { RecipientDirectory } from './recipients';
import { spoolData, type SpoolOutcome } from './spool';

export interface InboundSmtpOptions {
  db: Sequelize;
  blobs: BlobStore;
  resolver: DNSResolver;
  /** Our name in the greeting and in the authentication results (INBOUND_MX_HOST). */
  mxHost: string;
  /** workers/inbox/limits.ts: `inboundLimits(config)`, which tests narrow. */
  limits: InboundLimits;
  /** Recipient, rule and storage lookups; uncached when absent (workers/inbox/recipients.ts). */
  recipients?: RecipientDirectory;
  /** PEM certificate and key: STARTTLS is offered only with them. */
  tls?: { cert: Buffer; key: Buffer };
  logger: Logger;
  /** Called with what was stored, after it was stored; its failure is logged, the mail stays accepted. */
  handOff: (accepted: readonly AcceptedInboundMessage[]) => Promise<void>;
  /** How long close() waits for open connections (smtp-server's default is 30 s). */
  closeTimeoutMs?: number;
  /** Mail to VERP return paths (`bounces+<token>@…`): taken without an inbox when the token verifies. */
  bounces?: BounceIntake;
}

/** RFC 5321 §4.5.3.1.8 asks servers to take at least 100 recipients; more in one transaction is refused with 452. */
const MAX_RECIPIENTS = 100;

type SmtpCallback = (error?: Error | null) => void;

const REFUSALS = {
  blocked: '5.7.1 Sender blocked by the recipient',
  not_allowed: '5.7.1 Sender not accepted by the recipient',
} as const;

const TRY_LATER = '4.3.0 Temporary failure, try again later';
const SPOOL_FULL = '4.3.1 Insufficient system storage, try again later';
const QUOTA_FULL = "4.2.2 Mailbox full: the recipient's storage quota is used up, try again later";

const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });
const isReply = (error: unknown): error is Error & { responseCode: number } => error instanceof Error && 'responseCode' in error;

/** The answer at the end of DATA for a message the spool did not keep whole. */
function spoolRefusal(outcome: Exclude<SpoolOutcome, 'complete'>, limits: InboundLimits): Error {
  switch (outcome) {
    case 'too_big': return reply(552, `5.3.4 Message exceeds the maximum size of ${limits.maxMessageBytes} bytes`);
    case 'over_budget': return reply(452, SPOOL_FULL);
    case 'too_many_parts': return reply(552, `5.3.4 Message has more than ${limits.maxMimeParts} MIME parts`);
    case 'too_many_attachments': return reply(552, `5.3.4 Message has more than ${limits.maxAttachments} attachments`);
    case 'too_complex': return reply(552, '5.3.4 Message structure too complex (a part header or nesting past our limits)');
  }
}

/** What a listener keeps across its sessions; every SMTP command handler works on it. */
export interface Listener {
  options: InboundSmtpOptions;
  limits: InboundLimits;
  recipients: RecipientDirectory;
  admission: InboundAdmission;
  budget: ByteBudget;
  /** The recipients accepted in each session's current transaction, with whose inbox each one is. */
  transactions: Map<string, AcceptedRecipient[]>;
  /** The VERP return-path tokens accepted in each session's current transaction (bounce and complaint mail). */
  returnPaths: Map<string, string[]>;
}

const senderOf = (session: SMTPServerSession) => (session.envelope.mailFrom && session.envelope.mailFrom.address) || null;
/** MAIL FROM's SIZE= (RFC 1870), 0 when not declared. */
const declaredSize = (mailFrom: SMTPServerAddress | false) => Number((mailFrom && mailFrom.args && mailFrom.args.SIZE) || 0);

/** RCPT TO: the recipient's inbox, refused now when it is no inbox of ours, its sender blocked, or its workspace full. */
export async function checkRecipient(listener: Listener, address: SMTPServerAddress, session: SMTPServerSession): Promise<AcceptedRecipient> {
  const { recipients, limits } = listener;
  if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw reply(452, '4.5.3 Too many recipients');
  const at = address.address.lastIndexOf('@');
  const localPart = at > 0 ? address.address.slice(0, at) : '';
  const domain = at > 0 ? domainToASCII(address.address.slice(at + 1).replace(/\.$/, '').toLowerCase()) : '';
  const mailbox = localPart && domain ? await recipients.mailbox(localPart, domain) : { kind: 'not_ours' as const };
  if (mailbox.kind === 'not_ours') throw reply(550, '5.7.1 Relaying denied: this server takes no mail for that domain');
  if (mailbox.kind === 'unknown_mailbox') throw reply(550, '5.1.1 No such mailbox');
  // A blocked envelope sender is refused now; an allow list may still be met by the From header, read at DATA.
  const verdict = decideSender(await recipients.rules(mailbox.workspaceId), [senderOf(session)]);
  if (!verdict.accepted && verdict.reason === 'blocked') throw reply(550, REFUSALS.blocked);
  // A full workspace is told now, before the body travels; the sender's queue retries once mail was deleted.
  const stored = await recipients.storage(mailbox.workspaceId);
  if (stored.bytes + declaredSize(session.envelope.mailFrom) > limits.storageQuotaBytes) throw reply(452, QUOTA_FULL);
  return { workspaceId: mailbox.workspaceId, inboxId: mailbox.inboxId, address: address.address };
}

/**
 * The recipients whose workspace's rules take the message, judged on the envelope sender and the From header
 * together (core/inbox/rules.ts). A message to several workspaces goes to those that take it; the session
 * is refused only when none does.
 */
export async function recipientsWanting({ recipients }: Listener, accepted: readonly AcceptedRecipient[], senders: readonly (string | null)[]) {
  const verdicts = new Map<string, ReturnType<typeof decideSender>>();
  for (const workspaceId of new Set(accepted.map((recipient) => recipient.workspaceId))) {
    verdicts.set(workspaceId, decideSender(await recipients.rules(workspaceId), senders));
  }
  const refused = [...verdicts.values()].find((verdict) => !verdict.accepted);
  return {
    accepted: accepted.filter((recipient) => verdicts.get(recipient.workspaceId)?.accepted),
    refusal: refused && !refused.accepted ? refused.reason : null,
  };
}

/**
 * Every workspace among the recipients must have room for the message, read fresh from the database: all or
 * none, so a message is never kept for some and silently lost for others. Larger than the whole quota it
 * could never fit (552 5.2.2); otherwise the sender tries later (452 4.2.2).
 */
export async function checkStorage({ options, limits }: Listener, accepted: readonly AcceptedRecipient[], size: number): Promise<void> {
  if (size > limits.storageQuotaBytes) throw reply(552, `5.2.2 Message larger than the recipient's storage quota of ${limits.storageQuotaBytes} bytes`);
  for (const workspaceId of new Set(accepted.map((recipient) => recipient.workspaceId))) {
    const stored = await inboundStorageUsed(options.db, workspaceId);
    if (stored.bytes + size > limits.storageQuotaBytes) throw reply(452, QUOTA_FULL);
  }
}

/** DATA: the body spooled under the limits, judged on its From, and stored for each workspace that takes it. */
export async function receive(listener: Listener, stream: Readable, session: SMTPServerSession): Promise<AcceptedInboundMessage[]> {
  const { options, limits, budget, transactions, returnPaths } = listener;
  // A declared SIZE is taken whole as the body starts, so a message under way does not run out of budget
  // halfway because others started after it; it is taken here and not at MAIL FROM so that sessions which
  // never send a body hold nothing. Without a declaration (or room for it) bytes are taken as they come.
  const declared = declaredSize(session.envelope.mailFrom);
  const reserved = declared > 0 && declared <= limits.maxMessageBytes && budget.take(declared) ? declared : 0;
  const spoolLimits = { dir: limits.spoolDir, maxMessageBytes: limits.maxMessageBytes, maxMimeParts: limits.maxMimeParts, maxAttachments: limits.maxAttachments };
  const spooled = await spoolData(stream, budget, spoolLimits, reserved);
  try {
    const accepted = transactions.get(session.id) ?? [];
    const tokens = returnPaths.get(session.id) ?? [];
    transactions.set(session.id, []);
    returnPaths.set(session.id, []);
    if (spooled.outcome !== 'complete') throw spoolRefusal(spooled.outcome, limits);
    if (!accepted.length && !tokens.length) throw reply(503, '5.5.1 No valid recipients');
    // A report to a return path needs no inbox, rules or storage quota: it is read, recorded and deleted.
    if (tokens.length && options.bounces) await options.bounces.accept(spooled, tokens);
    if (!accepted.length) return [];
    const sender = { ip: session.remoteAddress, helo: session.hostNameAppearsAs || session.clientHostname, envelopeFrom: senderOf(session) };
    const wanted = await recipientsWanting(listener, accepted, [sender.envelopeFrom, ...fromAddressesOf(spooled.head)]);
    if (!wanted.accepted.length) throw reply(550, REFUSALS[wanted.refusal ?? 'not_allowed']);
    await checkStorage(listener, wanted.accepted, spooled.size);
    const deps = { db: options.db, blobs: options.blobs, resolver: options.resolver, mta: options.mxHost };
    return await acceptInboundMail(deps, { message: spooled, recipients: wanted.accepted, sender });
  } finally {
    await spooled.discard();
  }
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
  const listener: Listener = {
    options,
    limits,
    recipients: options.recipients ?? new RecipientDirectory(options.db, 0),
    admission: new InboundAdmission(limits),
    budget: new ByteBudget(limits.maxBytesInFlight),
    transactions: new Map(),
    returnPaths: new Map(),
  };
  const { admission, budget, transactions, returnPaths } = listener;

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

    onConnect(session, callback: SmtpCallback) {
      admission.admit(session.id, session.remoteAddress).then(
        (refusal) => callback(refusal && reply(refusal.code, refusal.text)),
        () => callback(reply(421, TRY_LATER)),
      );
    },

    onMailFrom(address, session, callback: SmtpCallback) {
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
    },

    onRcptTo(address, session, callback: SmtpCallback) {
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
    },

    onData(stream, session, callback: SmtpCallback) {
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
    },

    onClose(session) {
      transactions.delete(session.id);
      returnPaths.delete(session.id);
      admission.leave(session.id);
    },
  });
  server.on('error', (error) => options.logger.warn({ err: error }, 'inbound SMTP connection error'));
  return server;
}

/** The addresses of the From header, as far as they parse (an unreadable From names nobody). */
function fromAddressesOf(head: Buffer): string[] {
  const from = headerValue(headerBlockOf(head), 'from');
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
