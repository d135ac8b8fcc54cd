import { type Sequelize, Transaction } from 'sequelize';
import { normaliseDomainName } from '../../core/domain-names';
import { AppError } from '../../core/errors';
import { findDomain, findDomainByName } from '../../db/repositories/domains';
import { inboxMetrics } from '../../db/repositories/inbox-metrics';
import { listThreadMessages } from '../../db/repositories/inbox-messages';
import { findThread, listThreads, markThreadRead, setThreadFolder, type ThreadCursor, type ThreadFolder } from '../../db/repositories/inbox-threads';
import { deleteInbox, findInbox, type InboxRecord, type InboxStatus, insertInbox, listInboxes, updateInbox } from '../../db/repositories/inboxes';
import type { CreateInboxInput } from './schemas';

/** A metrics range may span at most this many days (a year and a day, so a whole leap year fits). */
const MAX_METRICS_DAYS = 366;
const DAY_MS = 86_400_000;

/** The cursor of a thread page: opaque to clients, the keyset position of the page's last thread. */
export function encodeCursor(cursor: ThreadCursor): string {
  return Buffer.from(`${cursor.lastMessageAt.toISOString()}|${cursor.id}`).toString('base64url');
}

function decodeCursor(value: string): ThreadCursor {
  const [at, id] = Buffer.from(value, 'base64url').toString().split('|');
  const lastMessageAt = new Date(at ?? '');
  if (!id || !/^[0-9a-f-]{36}$/i.test(id) || Number.isNaN(lastMessageAt.getTime())) {
    throw AppError.validation({ formErrors: [], fieldErrors: { cursor: ['Not a cursor this API gave'] } });
  }
  return { lastMessageAt, id };
}

const utcDay = (date: Date) => date.toISOString().slice(0, 10);

export async function getInbox(db: Sequelize, workspaceId: string, id: string): Promise<InboxRecord> {
  const inbox = await findInbox(db, workspaceId, id);
  if (!inbox) throw AppError.notFound('Inbox');
  return inbox;
}

export async function threadOfInbox(db: Sequelize, workspaceId: string, inboxId: string, threadId: string) {
  await getInbox(db, workspaceId, inboxId);
  const found = await findThread(db, workspaceId, inboxId, threadId);
  if (!found) throw AppError.notFound('Thread');
  return found;
}

/**
 * An inbox on a verified domain of the workspace. Inbound reception need not be enabled yet: the inbox
 * sends at once and receives from when POST /domains/:id/inbound turns the domain's MX on.
 */
export async function createInbox(db: Sequelize, workspaceId: string, input: CreateInboxInput): Promise<InboxRecord> {
  let domainId = input.domainId;
  if (input.domain !== undefined) {
    const name = normaliseDomainName(input.domain);
    if (!name.ok) throw AppError.validation({ formErrors: [], fieldErrors: { domain: [name.problem] } });
    const domain = await findDomainByName(db, workspaceId, name.name);
    if (!domain) throw AppError.validation({ formErrors: [], fieldErrors: { domain: [`No domain ${name.name} in this workspace`] } });
    domainId = domain.id;
  } else if (!domainId || !(await findDomain(db, workspaceId, domainId))) {
    throw AppError.validation({ formErrors: [], fieldErrors: { domainId: ['No such domain in this workspace'] } });
  }
  const claim = await insertInbox(db, workspaceId, { domainId: domainId as string, localPart: input.localPart, displayName: input.displayName ?? null });
  if (claim === 'domain_not_verified') throw new AppError('domain_not_verified', 'An inbox needs a verified domain (POST /domains/:id/verify)');
  if ('taken' in claim) throw new AppError('conflict', `The inbox ${input.localPart} already exists on this domain`, { id: claim.taken });
  return claim.created;
}

export async function changeInbox(db: Sequelize, workspaceId: string, id: string, changes: { displayName?: string | null; status?: InboxStatus }): Promise<InboxRecord> {
  const inbox = await updateInbox(db, workspaceId, id, changes);
  if (!inbox) throw AppError.notFound('Inbox');
  return inbox;
}

export async function removeInbox(db: Sequelize, workspaceId: string, id: string): Promise<InboxRecord> {
  const inbox = await getInbox(db, workspaceId, id);
  if (!(await deleteInbox(db, workspaceId, id))) throw AppError.notFound('Inbox');
  return inbox;
}

export async function threadPage(db: Sequelize, workspaceId: string, inboxId: string, query: { folder: ThreadFolder; limit: number; cursor?: string }) {
  await getInbox(db, workspaceId, inboxId);
  const after = query.cursor ? decodeCursor(query.cursor) : null;
  // One more than the page tells whether another page follows.
  const rows = await listThreads(db, workspaceId, inboxId, query.folder, { limit: query.limit + 1, after });
  const threads = rows.slice(0, query.limit);
  const last = threads[threads.length - 1];
  const nextCursor = rows.length > query.limit && last ? encodeCursor({ lastMessageAt: last.lastMessageAt, id: last.id }) : null;
  return { threads, nextCursor };
}

/** A thread with its messages, oldest first; reading it marks its inbound messages read. */
export async function readThread(db: Sequelize, workspaceId: string, inboxId: string, threadId: string) {
  await getInbox(db, workspaceId, inboxId);
  // One snapshot for the thread and its messages: mail processed between two separate reads would show a
  // thread whose folder and counts disagree with the messages listed under it.
  const { found, messages } = await db.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => {
    const thread = await findThread(db, workspaceId, inboxId, threadId, transaction);
    if (!thread) throw AppError.notFound('Thread');
    return { found: thread, messages: await listThreadMessages(db, workspaceId, threadId, transaction) };
  });
  if (found.unreadCount > 0) await markThreadRead(db, workspaceId, threadId);
  return { thread: found, messages };
}

export async function moveThread(db: Sequelize, workspaceId: string, inboxId: string, threadId: string, folder: ThreadFolder) {
  const found = await threadOfInbox(db, workspaceId, inboxId, threadId);
  // A new conversation that is still only a draft has nothing to archive or show in another folder yet.
  if (found.folder === 'drafts') throw new AppError('conflict', 'This thread is an unsent draft: send or delete the draft');
  return (await setThreadFolder(db, workspaceId, inboxId, threadId, folder)) ?? found;
}

/** Sums of the daily counters over [from, to] (UTC days; default the last 30 days). */
export async function inboxKpis(db: Sequelize, workspaceId: string, query: { from?: string; to?: string }) {
  const to = query.to ?? utcDay(new Date());
  const from = query.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) throw AppError.validation({ formErrors: [], fieldErrors: { from: ['Must not be after to'] } });
  if (days > MAX_METRICS_DAYS) throw AppError.validation({ formErrors: [], fieldErrors: { from: [`At most ${MAX_METRICS_DAYS} days from to`] } });
  const rows = await inboxMetrics(db, workspaceId, { from, to });
  const total = { received: 0, sent: 0, delivered: 0, bounced: 0 };
  for (const day of rows.daily) {
    total.received += day.received;
    total.sent += day.sent;
    total.delivered += day.delivered;
    total.bounced += day.bounced;
  }
  const rate = (count: number) => (total.sent > 0 ? Math.round((count / total.sent) * 10_000) / 10_000 : null);
  return { from, to, kpis: { ...total, deliveryRate: rate(total.delivered), bounceRate: rate(total.bounced) }, daily: rows.daily, perInbox: rows.perInbox };
}

export function createInboxService(db: Sequelize) {
  return {
    get: (workspaceId: string, id: string) => getInbox(db, workspaceId, id),
    thread: (workspaceId: string, inboxId: string, threadId: string) => threadOfInbox(db, workspaceId, inboxId, threadId),
    list: (workspaceId: string, page: { limit: number; offset: number }) => listInboxes(db, workspaceId, page),
    create: (workspaceId: string, input: CreateInboxInput) => createInbox(db, workspaceId, input),
    update: (workspaceId: string, id: string, changes: { displayName?: string | null; status?: InboxStatus }) => changeInbox(db, workspaceId, id, changes),
    remove: (workspaceId: string, id: string) => removeInbox(db, workspaceId, id),
    threads: (workspaceId: string, inboxId: string, query: { folder: ThreadFolder; limit: number; cursor?: string }) => threadPage(db, workspaceId, inboxId, query),
    threadDetail: (workspaceId: string, inboxId: string, threadId: string) => readThread(db, workspaceId, inboxId, threadId),
    moveThread: (workspaceId: string, inboxId: string, threadId: string, folder: ThreadFolder) => moveThread(db, workspaceId, inboxId, threadId, folder),
    metrics: (workspaceId: string, query: { from?: string; to?: string }) => inboxKpis(db, workspaceId, query),
  };
}

export type InboxService = ReturnType<typeof createInboxService>;
