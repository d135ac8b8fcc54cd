import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { RenderedChat } from '../../core/message-content';
import type { TrackedLink } from '../../core/tracking/tracked-html';
import { saveMessageLinks } from './message-links';

export type MessageKind = 'transactional' | 'campaign' | 'automation';
export type MessageStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'bounced' | 'complained' | 'failed' | 'canceled';

export interface DroppedRecipient {
  address: string;
  reason: string;
}

export interface NewMessage {
  id: string;
  kind: MessageKind;
  channel: string;
  idempotencyKey: string;
  requestHash: string;
  fromAddress: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string | null;
  content: Record<string, unknown>;
  templateId: string | null;
  campaignId?: string | null;
  enrollmentId?: string | null;
  contactId?: string | null;
  quotaUnits: number;
  quotaPeriod: string;
  droppedRecipients: DroppedRecipient[];
  /** The accepting request's W3C trace context, when tracing is on (migration 0042). */
  traceparent?: string | null;
}

export interface Engagement {
  opensHuman: number;
  opensMachine: number;
  clicks: number;
  contentClicks: number;
  lastLinkUrl: string | null;
  lastLinkRole: string | null;
  /** Distinct links a person clicked, as written. */
  links: string[];
  unsubscribed: boolean;
  bounced: boolean;
  lastEventAt: Date | null;
}

export interface Message extends Omit<NewMessage, 'campaignId' | 'enrollmentId' | 'contactId'> {
  workspaceId: string;
  status: MessageStatus;
  campaignId: string | null;
  enrollmentId: string | null;
  /** The automation of a journey message (migration 0020). */
  automationId: string | null;
  contactId: string | null;
  templateVersionId: string | null;
  provider: string | null;
  providerMessageId: string | null;
  engagement: Engagement;
  createdAt: Date;
  dispatchedAt: Date | null;
}

export interface MessageRow {
  id: string;
  workspace_id: string;
  kind: MessageKind;
  channel: string;
  status: MessageStatus;
  idempotency_key: string;
  request_hash: string;
  from_address: string | null;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  subject: string | null;
  content: Record<string, unknown>;
  template_id: string | null;
  template_version_id: string | null;
  campaign_id: string | null;
  enrollment_id: string | null;
  automation_id: string | null;
  contact_id: string | null;
  quota_units: number;
  quota_period: string;
  dropped_recipients: DroppedRecipient[];
  provider: string | null;
  provider_message_id: string | null;
  opens_human: number;
  opens_machine: number;
  clicks: number;
  content_clicks: number;
  last_link_url: string | null;
  last_link_role: string | null;
  clicked_links: string[];
  unsubscribed: boolean;
  bounced: boolean;
  last_event_at: Date | null;
  created_at: Date;
  dispatched_at: Date | null;
}

type EngagementColumns = Pick<
  MessageRow,
  'opens_human' | 'opens_machine' | 'clicks' | 'content_clicks' | 'last_link_url' | 'last_link_role' | 'clicked_links' | 'unsubscribed' | 'bounced' | 'last_event_at'
>;

function toEngagement(row: EngagementColumns): Engagement {
  return {
    opensHuman: row.opens_human,
    opensMachine: row.opens_machine,
    clicks: row.clicks,
    contentClicks: row.content_clicks,
    lastLinkUrl: row.last_link_url,
    lastLinkRole: row.last_link_role,
    links: row.clicked_links,
    unsubscribed: row.unsubscribed,
    bounced: row.bounced,
    lastEventAt: row.last_event_at,
  };
}

export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    channel: row.channel,
    status: row.status,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    fromAddress: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    bcc: row.bcc_addresses,
    subject: row.subject,
    content: row.content,
    templateId: row.template_id,
    templateVersionId: row.template_version_id,
    campaignId: row.campaign_id,
    enrollmentId: row.enrollment_id,
    automationId: row.automation_id ?? null,
    contactId: row.contact_id,
    quotaUnits: row.quota_units,
    quotaPeriod: row.quota_period,
    droppedRecipients: row.dropped_recipients,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    engagement: toEngagement(row),
    createdAt: row.created_at,
    dispatchedAt: row.dispatched_at,
  };
}

/** Messages of one workspace with their stored render, for delivery: one query for many. Absent ids are gone. */
export async function findMessagesToSend(
  db: Sequelize,
  workspaceId: string,
  messageIds: readonly string[],
): Promise<Map<string, { message: Message; rendered: RenderedMessage | null }>> {
  const rows = await db.query<MessageRow & { rendered: RenderedMessage | null }>('SELECT * FROM messages WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
    bind: [workspaceId, messageIds],
    type: QueryTypes.SELECT,
  });
  return new Map(rows.map((row) => [row.id, { message: toMessage(row), rendered: row.rendered }]));
}

export async function findMessage(db: Sequelize, workspaceId: string, messageId: string): Promise<Message | null> {
  const rows = await db.query<MessageRow>('SELECT * FROM messages WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, messageId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toMessage(rows[0]) : null;
}

export interface RenderedEmail {
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
  templateVersionId: string | null;
  /** The tracked links of the HTML (its click redirects lead there); stored in their own table, not with the content. */
  links?: TrackedLink[];
}

/** What a message of any channel rendered to (core/message-content.ts says how chat renders are told apart). */
export type RenderedMessage = RenderedEmail | RenderedChat;

/**
 * Stores the renders of several messages of one workspace, with their link tables, in one transaction of
 * two statements: no redirect ever points at a missing row, and the first subject stays.
 */
export async function saveRendered(db: Sequelize, workspaceId: string, renders: ReadonlyArray<{ messageId: string; rendered: RenderedMessage }>): Promise<void> {
  await db.transaction(async (transaction) => {
    await db.query(
      `UPDATE messages m SET rendered = r.rendered, template_version_id = r.template_version_id,
         subject = COALESCE(m.subject, r.rendered->>'subject'), updated_at = now()
       FROM unnest($2::uuid[], $3::jsonb[], $4::uuid[]) AS r (id, rendered, template_version_id)
       WHERE m.workspace_id = $1 AND m.id = r.id`,
      {
        bind: [
          workspaceId,
          renders.map((render) => render.messageId),
          renders.map(({ rendered }) => JSON.stringify('links' in rendered ? { ...rendered, links: undefined } : rendered)),
          renders.map((render) => render.rendered.templateVersionId),
        ],
        transaction,
      },
    );
    await saveMessageLinks(db, workspaceId, renders.map((render) => ({ messageId: render.messageId, links: ('links' in render.rendered && render.rendered.links) || [] })), transaction);
  });
}

/** Moves a message only forward from the statuses given, so a late or repeated step cannot undo a later one. */
export async function moveStatus(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  from: readonly MessageStatus[],
  to: MessageStatus,
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE messages SET status = $4, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = ANY($3::text[]) RETURNING id`,
    { bind: [workspaceId, messageId, from, to], type: QueryTypes.SELECT, transaction },
  );
  return rows.length === 1;
}

export interface MessageFilters {
  /** One channel's messages (GET /emails lists email only). */
  channel?: string;
  status?: string;
  kind?: string;
  campaignId?: string;
  contactId?: string;
  /** A recipient address, matched case-insensitively against the To recipients. */
  to?: string;
  from?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

/** A message as a list shows it: without its content and rendered body, which can be megabytes each. */
export type MessageListItem = Pick<
  Message,
  'id' | 'status' | 'kind' | 'to' | 'fromAddress' | 'subject' | 'campaignId' | 'enrollmentId' | 'contactId' | 'createdAt' | 'engagement'
>;

type MessageListRow = Pick<
  MessageRow,
  'id' | 'status' | 'kind' | 'to_addresses' | 'from_address' | 'subject' | 'campaign_id' | 'enrollment_id' | 'contact_id' | 'created_at'
> &
  EngagementColumns;

const LIST_COLUMNS = `id, status, kind, to_addresses, from_address, subject, campaign_id, enrollment_id, contact_id, created_at,
  opens_human, opens_machine, clicks, content_clicks, last_link_url, last_link_role, clicked_links, unsubscribed, bounced, last_event_at`;

function toListItem(row: MessageListRow): MessageListItem {
  return {
    id: row.id,
    status: row.status,
    kind: row.kind,
    to: row.to_addresses,
    fromAddress: row.from_address,
    subject: row.subject,
    campaignId: row.campaign_id,
    enrollmentId: row.enrollment_id,
    contactId: row.contact_id,
    createdAt: row.created_at,
    engagement: toEngagement(row),
  };
}

/** Newest first; `total` counts every match so clients can page with limit/offset. */
export async function listMessages(db: Sequelize, workspaceId: string, filters: MessageFilters): Promise<{ rows: MessageListItem[]; total: number }> {
  const where = ['workspace_id = $1'];
  const bind: unknown[] = [workspaceId];
  const add = (clause: (placeholder: string) => string, value: unknown) => {
    bind.push(value);
    where.push(clause(`$${bind.length}`));
  };
  if (filters.channel) add((p) => `channel = ${p}`, filters.channel);
  if (filters.status) add((p) => `status = ${p}`, filters.status);
  if (filters.kind) add((p) => `kind = ${p}`, filters.kind);
  if (filters.campaignId) add((p) => `campaign_id = ${p}`, filters.campaignId);
  if (filters.contactId) add((p) => `contact_id = ${p}`, filters.contactId);
  // To recipients are stored formatted ("Name <a@x>"); match the address inside either form.
  if (filters.to) add((p) => `EXISTS (SELECT 1 FROM unnest(to_addresses) t WHERE lower(t) = ${p} OR lower(t) LIKE '%<' || ${p} || '>')`, filters.to.toLowerCase());
  if (filters.from) add((p) => `created_at >= ${p}`, filters.from);
  if (filters.until) add((p) => `created_at < ${p}`, filters.until);
  const condition = where.join(' AND ');
  const [rows, counted] = await Promise.all([
    db.query<MessageListRow>(
      `SELECT ${LIST_COLUMNS} FROM messages WHERE ${condition} ORDER BY created_at DESC, id DESC LIMIT ${Number(filters.limit)} OFFSET ${Number(filters.offset)}`,
      { bind, type: QueryTypes.SELECT },
    ),
    db.query<{ total: string }>(`SELECT count(*) AS total FROM messages WHERE ${condition}`, { bind, type: QueryTypes.SELECT }),
  ]);
  return { rows: rows.map(toListItem), total: Number(counted[0].total) };
}

/**
 * Provider callbacks carry the provider's id only; this is the one lookup that finds the workspace. The
 * recipients (to, cc and bcc, formatted) are what a bounce or complaint may name.
 */
export async function findByProviderMessageId(
  db: Sequelize,
  provider: string,
  providerMessageId: string,
): Promise<{ workspaceId: string; messageId: string; recipients: string[] } | null> {
  const rows = await db.query<{ id: string; workspace_id: string; to_addresses: string[]; cc_addresses: string[]; bcc_addresses: string[] }>(
    'SELECT id, workspace_id, to_addresses, cc_addresses, bcc_addresses FROM messages WHERE provider = $1 AND provider_message_id = $2',
    { bind: [provider, providerMessageId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  return row ? { workspaceId: row.workspace_id, messageId: row.id, recipients: [...row.to_addresses, ...row.cc_addresses, ...row.bcc_addresses] } : null;
}
