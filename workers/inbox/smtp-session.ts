import type { Readable } from 'node:stream';
import { domainToASCII } from 'node:url';
import type { DNSResolver } from 'mailauth';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { parseMailboxes } from '../../core/addresses';
import { headerBlockOf, headerValue } from '../../core/inbox/header-block';
import type { ByteBudget } from '../../core/inbox/byte-budget';
import { decideSender } from '../../core/inbox/rules';
import type { BlobStore } from '../../db/blob-store';
import { inboundStorageUsed } from '../../db/repositories/inbox-storage';
import { acceptInboundMail, type AcceptedInboundMessage, type AcceptedRecipient } from './acceptance';
import type { BounceIntake } from './bounces';
import type { InboundAdmission } from './admission';
import type { InboundLimits } from './limits';
import type { RecipientDirectory } from './recipients';
import { spoolData, type SpoolOutcome } from './spool';

/*
 * One inbound SMTP session's decisions (workers/inbox/smtp-server.ts wires them into the server): what a
 * listener keeps across sessions, the checks at RCPT TO, and the DATA that stores a message.
 */

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
export const MAX_RECIPIENTS = 100;

export type SmtpCallback = (error?: Error | null) => void;

const REFUSALS = {
  blocked: '5.7.1 Sender blocked by the recipient',
  not_allowed: '5.7.1 Sender not accepted by the recipient',
} as const;

export const TRY_LATER = '4.3.0 Temporary failure, try again later';
export const SPOOL_FULL = '4.3.1 Insufficient system storage, try again later';
const QUOTA_FULL = "4.2.2 Mailbox full: the recipient's storage quota is used up, try again later";

export const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });
export const isReply = (error: unknown): error is Error & { responseCode: number } => error instanceof Error && 'responseCode' in error;

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
export const declaredSize = (mailFrom: SMTPServerAddress | false) => Number((mailFrom && mailFrom.args && mailFrom.args.SIZE) || 0);

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

/** The addresses of the From header, as far as they parse (an unreadable From names nobody). */
export function fromAddressesOf(head: Buffer): string[] {
  const from = headerValue(headerBlockOf(head), 'from');
  const parsed = from ? parseMailboxes(from) : null;
  return parsed?.ok ? parsed.mailboxes.map((mailbox) => mailbox.address) : [];
}
