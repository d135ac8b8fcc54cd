import { QueryTypes, type Sequelize } from 'sequelize';
import type { MessageKind } from './messages';

/**
 * What a contact's timeline (GET /contacts/:id/journey) shows besides its journeys (enrollment-journey.ts):
 * every message sent to it, its touches (clicks on our links) and its conversions. Each read is newest
 * first, at most `limit`, and only before `before`, so the caller merges pages of every kind.
 */

interface Page {
  limit: number;
  before?: Date;
}

export interface TimelineMessage {
  at: Date;
  messageId: string;
  kind: MessageKind;
  channel: string;
  subject: string | null;
  status: string;
  campaignId: string | null;
  campaignName: string | null;
  enrollmentId: string | null;
  automationId: string | null;
  nodeId: string | null;
  engagement: {
    opensHuman: number;
    opensMachine: number;
    clicks: number;
    contentClicks: number;
    links: string[];
    lastLinkUrl: string | null;
    bounced: boolean;
    unsubscribed: boolean;
  };
}

type MessageRow = {
  id: string;
  created_at: Date;
  kind: MessageKind;
  channel: string;
  subject: string | null;
  status: string;
  campaign_id: string | null;
  campaign_name: string | null;
  enrollment_id: string | null;
  automation_id: string | null;
  journey_node_id: string | null;
  opens_human: number;
  opens_machine: number;
  clicks: number;
  content_clicks: number;
  clicked_links: string[] | null;
  last_link_url: string | null;
  bounced: boolean;
  unsubscribed: boolean;
};

const MESSAGE_COLUMNS = `m.id, m.created_at, m.kind, m.channel, m.subject, m.status, m.campaign_id, c.name AS campaign_name, m.enrollment_id,
  m.automation_id, m.journey_node_id, m.opens_human, m.opens_machine, m.clicks, m.content_clicks, m.clicked_links, m.last_link_url,
  m.bounced, m.unsubscribed`;

/**
 * Every message of the contact, whatever its kind: those written with its id (campaign, journey, and
 * `POST /messages` with a contactId), and transactional emails without a contact sent to one of its email
 * addresses (messages_transactional_to_idx, migration 0038). Two index reads, each a page deep, merged.
 */
export async function contactMessages(db: Sequelize, workspaceId: string, contactId: string, emails: readonly string[], page: Page): Promise<TimelineMessage[]> {
  const bind = [workspaceId, contactId, page.before ?? null, page.limit, emails.map((email) => email.toLowerCase())];
  const rows = await db.query<MessageRow>(
    // The address branch is materialized without a LIMIT so the planner takes the GIN index: with the
    // LIMIT beside it, it could walk the workspace's newest messages (messages_recent_idx) hoping for a
    // match, the whole workspace for a contact that never got a transactional email.
    `WITH addressed AS MATERIALIZED (
       SELECT id FROM messages
       WHERE workspace_id = $1 AND contact_id IS NULL AND kind = 'transactional' AND cardinality($5::text[]) > 0
         AND mailbox_addresses(to_addresses) && $5::text[] AND ($3::timestamptz IS NULL OR created_at < $3)
     )
     (SELECT ${MESSAGE_COLUMNS} FROM messages m LEFT JOIN campaigns c ON c.id = m.campaign_id
       WHERE m.workspace_id = $1 AND m.contact_id = $2 AND ($3::timestamptz IS NULL OR m.created_at < $3)
       ORDER BY m.created_at DESC, m.id DESC LIMIT $4)
     UNION ALL
     (SELECT ${MESSAGE_COLUMNS} FROM addressed a JOIN messages m ON m.id = a.id LEFT JOIN campaigns c ON c.id = m.campaign_id
       ORDER BY m.created_at DESC, m.id DESC LIMIT $4)`,
    { bind, type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    at: row.created_at,
    messageId: row.id,
    kind: row.kind,
    channel: row.channel,
    subject: row.subject,
    status: row.status,
    campaignId: row.campaign_id,
    campaignName: row.campaign_name,
    enrollmentId: row.enrollment_id,
    automationId: row.automation_id,
    nodeId: row.journey_node_id,
    engagement: {
      opensHuman: row.opens_human,
      opensMachine: row.opens_machine,
      clicks: row.clicks,
      contentClicks: row.content_clicks,
      links: row.clicked_links ?? [],
      lastLinkUrl: row.last_link_url,
      bounced: row.bounced,
      unsubscribed: row.unsubscribed,
    },
  }));
}

export interface TimelineTouch {
  id: string;
  at: Date;
  /** The clicked message's kind (campaign, automation, transactional). */
  kind: string | null;
  messageId: string | null;
  campaignId: string | null;
  automationId: string | null;
  url: string;
  isContent: boolean;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
}

/** The contact's touches: its clicks on our links (utm_touches_contact_idx). */
export async function contactTouches(db: Sequelize, workspaceId: string, contactId: string, page: Page): Promise<TimelineTouch[]> {
  const rows = await db.query<{
    id: string; occurred_at: Date; kind: string | null; message_id: string | null; campaign_id: string | null; automation_id: string | null;
    url: string; is_content: boolean; source: string | null; medium: string | null; campaign: string | null;
  }>(
    `SELECT id, occurred_at, kind, message_id, campaign_id, automation_id, coalesce(canonical_url, url) AS url, is_content, source, medium, campaign
     FROM utm_touches WHERE workspace_id = $1 AND contact_id = $2 AND ($3::timestamptz IS NULL OR occurred_at < $3)
     ORDER BY occurred_at DESC, id DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    id: row.id,
    at: row.occurred_at,
    kind: row.kind,
    messageId: row.message_id,
    campaignId: row.campaign_id,
    automationId: row.automation_id,
    url: row.url,
    isContent: row.is_content,
    utmSource: row.source,
    utmMedium: row.medium,
    utmCampaign: row.campaign,
  }));
}

export interface TimelineConversion {
  id: string;
  at: Date;
  name: string;
  source: string;
  valueCents: number;
  currency: string | null;
  attributedKind: string | null;
  touchpoints: number;
  /** The credited (last) touch, when one of ours was in the window. */
  touched: boolean;
  messageId: string | null;
  campaignId: string | null;
  automationId: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  orderId: string | null;
  orderStatus: string | null;
  /** A store's test order: shown, and left out of every report. */
  test: boolean;
}

/** The contact's conversions (conversions_contact_idx), cancelled and test orders included and marked. */
export async function contactConversionEntries(db: Sequelize, workspaceId: string, contactId: string, page: Page): Promise<TimelineConversion[]> {
  const rows = await db.query<{
    id: string; occurred_at: Date; name: string; source: string; value_cents: string; currency: string | null; attributed_kind: string | null;
    touchpoints: number; last_touch_id: string | null; last_message_id: string | null; last_campaign_id: string | null; last_automation_id: string | null;
    utm_source: string | null; utm_medium: string | null; utm_campaign: string | null; order_id: string | null; order_status: string | null; test: boolean | null;
  }>(
    `SELECT c.id, c.occurred_at, c.name, c.source, c.value_cents, c.currency, c.attributed_kind, c.touchpoints, c.last_touch_id, c.last_message_id,
            c.last_campaign_id, c.last_automation_id, c.utm_source, c.utm_medium, c.utm_campaign, c.order_id, o.status AS order_status, o.test
     FROM conversions c LEFT JOIN commerce_orders o ON o.id = c.order_id
     WHERE c.workspace_id = $1 AND c.contact_id = $2 AND ($3::timestamptz IS NULL OR c.occurred_at < $3)
     ORDER BY c.occurred_at DESC, c.id DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    id: row.id,
    at: row.occurred_at,
    name: row.name,
    source: row.source,
    valueCents: Number(row.value_cents),
    currency: row.currency,
    attributedKind: row.attributed_kind,
    touchpoints: row.touchpoints,
    touched: row.last_touch_id !== null,
    messageId: row.last_message_id,
    campaignId: row.last_campaign_id,
    automationId: row.last_automation_id,
    utmSource: row.utm_source,
    utmMedium: row.utm_medium,
    utmCampaign: row.utm_campaign,
    orderId: row.order_id,
    orderStatus: row.order_status,
    test: row.test ?? false,
  }));
}
