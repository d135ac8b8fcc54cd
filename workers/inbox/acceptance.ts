import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DNSResolver } from 'mailauth';
import type { Client } from '@temporalio/client';
import type { Sequelize } from 'sequelize';
import { headerBlockOf, headerValue } from '../../core/inbox/header-block';
import { parseMessageIds } from '../../core/inbox/threading';
import type { BlobStore } from '../../db/blob-store';
import { insertReceivedMessage } from '../../db/repositories/inbox-mail';
import { markInboundStarted } from '../../db/repositories/inbox-outbox';
import { withDeadline } from '../../temporal/deadline';
import { startInboundMailWorkflow } from '../../temporal/inbound';
import { evaluateSender, type SenderContext } from './authentication';

export interface AcceptedRecipient {
  workspaceId: string;
  inboxId: string;
  /** As given at RCPT TO. */
  address: string;
}

/** A message as the listener spooled it (workers/inbox/spool.ts): on disk, with its first bytes at hand. */
export interface SpooledRaw {
  path: string;
  size: number;
  /** The start of the message, its header block within. */
  head: Buffer;
}

/** One SMTP transaction after its DATA: the message and the recipients accepted at RCPT. */
export interface InboundTransaction {
  message: SpooledRaw;
  recipients: readonly AcceptedRecipient[];
  sender: SenderContext;
}

export interface AcceptedInboundMessage {
  id: string;
  workspaceId: string;
  inboxId: string;
}

export interface AcceptanceDeps {
  db: Sequelize;
  blobs: BlobStore;
  resolver: DNSResolver;
  /** Our MX host name, written into the authentication results as the evaluating server. */
  mta: string;
}

/**
 * Stores an accepted transaction before the listener answers 250: the sender's verdicts, the raw bytes in the
 * blob store (streamed from the spool file, never whole in memory) (one object per workspace among the recipients, so no workspace's data points at another's),
 * then one `received` row per inbox. Throws when the store or the database fails, and the listener answers
 * 451 so the sender retries: nothing is acknowledged that is not durable.
 */
export async function acceptInboundMail(deps: AcceptanceDeps, transaction: InboundTransaction): Promise<AcceptedInboundMessage[]> {
  const { message } = transaction;
  const auth = await evaluateSender(createReadStream(message.path), transaction.sender, { resolver: deps.resolver, mta: deps.mta });
  const messageIdHeader = parseMessageIds(headerValue(headerBlockOf(message.head), 'message-id'))[0] ?? null;
  const accepted: AcceptedInboundMessage[] = [];
  for (const [workspaceId, recipients] of byWorkspace(transaction.recipients)) {
    const rawBlobKey = `inbound/${workspaceId}/${randomUUID()}.eml`;
    await deps.blobs.putFile(rawBlobKey, message.path, message.size, 'message/rfc822');
    let stored = 0;
    for (const recipient of recipients) {
      const id = await insertReceivedMessage(deps.db, {
        workspaceId,
        inboxId: recipient.inboxId,
        messageIdHeader,
        envelopeFrom: transaction.sender.envelopeFrom,
        envelopeTo: recipient.address,
        remoteAddress: transaction.sender.ip,
        rawBlobKey,
        rawSize: message.size,
        auth,
      });
      if (id) {
        stored += 1;
        accepted.push({ id, workspaceId, inboxId: recipient.inboxId });
      }
    }
    // A repeat delivery of mail we already hold: its copy of the bytes is referenced by no row.
    if (!stored) await deps.blobs.delete(rawBlobKey);
  }
  return accepted;
}

/** Recipients grouped by workspace, each inbox once (two spellings of one mailbox are one delivery). */
function byWorkspace(recipients: readonly AcceptedRecipient[]): Map<string, AcceptedRecipient[]> {
  const groups = new Map<string, AcceptedRecipient[]>();
  const seen = new Set<string>();
  for (const recipient of recipients) {
    if (seen.has(recipient.inboxId)) continue;
    seen.add(recipient.inboxId);
    groups.set(recipient.workspaceId, [...(groups.get(recipient.workspaceId) ?? []), recipient]);
  }
  return groups;
}

/** How long one start may take before the message is left to the outbox. */
const START_DEADLINE_MS = 5_000;

export interface HandOffDeps {
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
}

/**
 * Starts the inbound-mail workflow of each accepted message right after the 250, then takes the started ones
 * out of the outbox (`workflow_started_at`). A start that fails loses nothing: the row stays `received` without
 * `workflow_started_at`, and the inbound dispatcher (workers/inbox/dispatcher.ts) starts it a few seconds
 * later. Throws the first failure after trying them all, so the listener logs it.
 */
export async function startInboundMailWorkflows(deps: HandOffDeps, accepted: readonly AcceptedInboundMessage[]): Promise<void> {
  const started: string[] = [];
  let failure: unknown = null;
  for (const message of accepted) {
    try {
      // A Temporal that hangs must not hold the hand-off: the outbox has the message anyway.
      await withDeadline(deps.client, START_DEADLINE_MS, () =>
        startInboundMailWorkflow(deps.client, deps.taskQueuePrefix, { workspaceId: message.workspaceId, inboxMessageId: message.id }));
      started.push(message.id);
    } catch (error) {
      failure ??= error;
    }
  }
  await markInboundStarted(deps.db, started);
  if (failure !== null) throw failure;
}
