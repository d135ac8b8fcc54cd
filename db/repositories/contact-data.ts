import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * How many rows of each kind a contact's export holds at most, newest first: enough for any person's
 * history in practice, and a bound on one request's memory. `truncated` in the export says which hit it.
 */
export const CONTACT_EXPORT_LIMITS = {
  messages: 1_000,
  eventsPerMessage: 50,
  contactEvents: 1_000,
  conversions: 1_000,
  orders: 1_000,
  inboxMessages: 500,
  enrollments: 1_000,
} as const;

type Json = Record<string, unknown>;

/**
 * Each section of the export as one JSON array built in SQL (camelCase keys, newest first, one more row
 * than the bound so a cut is detected). `$1` the workspace, `$2` the contact, `$3` the bound; all read
 * through the contact's own indexes (by contact id), except inbox mail, found by its sender's address.
 */
const SECTIONS = {
  identities: `SELECT jsonb_build_object('channel', channel, 'address', address, 'consent', consent, 'verified', verified,
      'primary', is_primary, 'createdAt', created_at, 'updatedAt', updated_at) AS item
    FROM contact_identities WHERE workspace_id = $1 AND contact_id = $2 ORDER BY channel, address LIMIT $3`,
  tags: `SELECT jsonb_build_object('id', t.id, 'name', t.name, 'addedAt', ct.created_at) AS item
    FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.workspace_id = $1 AND ct.contact_id = $2 ORDER BY lower(t.name) LIMIT $3`,
  lists: `SELECT jsonb_build_object('id', l.id, 'name', l.name, 'addedAt', m.created_at) AS item
    FROM list_members m JOIN lists l ON l.id = m.list_id WHERE m.workspace_id = $1 AND m.contact_id = $2 ORDER BY lower(l.name) LIMIT $3`,
  suppressions: `SELECT jsonb_build_object('channel', s.channel, 'address', s.address, 'reason', s.reason, 'createdAt', s.created_at) AS item
    FROM suppressions s JOIN contact_identities i ON i.workspace_id = s.workspace_id AND i.channel = s.channel AND i.address = s.address
    WHERE s.workspace_id = $1 AND i.contact_id = $2 ORDER BY s.created_at DESC LIMIT $3`,
  messages: `SELECT jsonb_build_object('id', m.id, 'kind', m.kind, 'channel', m.channel, 'status', m.status, 'from', m.from_address,
      'to', m.to_addresses, 'cc', m.cc_addresses, 'subject', m.subject, 'campaignId', m.campaign_id, 'enrollmentId', m.enrollment_id,
      'provider', m.provider, 'createdAt', m.created_at, 'updatedAt', m.updated_at,
      'events', COALESCE((SELECT jsonb_agg(jsonb_build_object('type', e.type, 'classification', e.classification, 'bounceType', e.bounce_type,
          'linkUrl', e.link_url, 'at', e.created_at) ORDER BY e.created_at)
        FROM (SELECT * FROM message_events WHERE message_id = m.id ORDER BY created_at DESC LIMIT ${CONTACT_EXPORT_LIMITS.eventsPerMessage}) e), '[]'::jsonb)) AS item
    FROM messages m WHERE m.workspace_id = $1 AND m.contact_id = $2 ORDER BY m.created_at DESC LIMIT $3`,
  contactEvents: `SELECT jsonb_build_object('id', id, 'name', name, 'properties', properties, 'occurredAt', occurred_at, 'receivedAt', created_at) AS item
    FROM contact_events WHERE workspace_id = $1 AND contact_id = $2 ORDER BY occurred_at DESC LIMIT $3`,
  conversions: `SELECT jsonb_build_object('id', id, 'name', name, 'source', source, 'externalId', external_id, 'valueCents', value_cents,
      'currency', currency, 'occurredAt', occurred_at, 'orderId', order_id, 'utmSource', utm_source, 'utmMedium', utm_medium,
      'utmCampaign', utm_campaign) AS item
    FROM conversions WHERE workspace_id = $1 AND contact_id = $2 ORDER BY occurred_at DESC LIMIT $3`,
  orders: `SELECT jsonb_build_object('id', id, 'source', source, 'externalId', external_id, 'status', status, 'total', total,
      'refunded', refunded, 'currency', currency, 'placedAt', placed_at, 'items', items, 'test', test) AS item
    FROM commerce_orders WHERE workspace_id = $1 AND contact_id = $2 ORDER BY placed_at DESC LIMIT $3`,
  inboxMessages: `SELECT jsonb_build_object('id', im.id, 'inboxId', im.inbox_id, 'threadId', im.thread_id, 'from', im.from_address,
      'fromName', im.from_name, 'to', im.to_addresses, 'cc', im.cc_addresses, 'subject', im.subject, 'text', im.text,
      'attachments', (SELECT COALESCE(jsonb_agg(jsonb_build_object('filename', a->'filename', 'contentType', a->'contentType', 'size', a->'size')), '[]'::jsonb)
        FROM jsonb_array_elements(im.attachments) a),
      'receivedAt', im.created_at) AS item
    FROM inbox_messages im
    WHERE im.workspace_id = $1 AND im.direction = 'in'
      AND lower(im.from_address) IN (SELECT lower(address) FROM contact_identities WHERE workspace_id = $1 AND contact_id = $2 AND channel = 'email')
    ORDER BY im.created_at DESC LIMIT $3`,
  enrollments: `SELECT jsonb_build_object('id', id, 'automationId', automation_id, 'status', status, 'source', source, 'enteredAt', entered_at,
      'exitedAt', exited_at, 'exitReason', exit_reason, 'currentNodeId', current_node_id) AS item
    FROM enrollments WHERE workspace_id = $1 AND contact_id = $2 ORDER BY entered_at DESC LIMIT $3`,
} as const;

export type ContactDataSection = keyof typeof SECTIONS;

const BOUNDS: Record<ContactDataSection, number> = {
  identities: 1_000,
  tags: 10_000,
  lists: 10_000,
  suppressions: 1_000,
  messages: CONTACT_EXPORT_LIMITS.messages,
  contactEvents: CONTACT_EXPORT_LIMITS.contactEvents,
  conversions: CONTACT_EXPORT_LIMITS.conversions,
  orders: CONTACT_EXPORT_LIMITS.orders,
  inboxMessages: CONTACT_EXPORT_LIMITS.inboxMessages,
  enrollments: CONTACT_EXPORT_LIMITS.enrollments,
};

export interface ContactData {
  sections: Record<ContactDataSection, Json[]>;
  /** Sections that held more rows than their bound (the newest are exported). */
  truncated: ContactDataSection[];
}

/** Everything held about one contact of the workspace (the contact row itself is the caller's), section by section. */
export async function contactData(db: Sequelize, workspaceId: string, contactId: string): Promise<ContactData> {
  const names = Object.keys(SECTIONS) as ContactDataSection[];
  const read = await Promise.all(
    names.map((name) =>
      db.query<{ item: Json }>(SECTIONS[name], { bind: [workspaceId, contactId, BOUNDS[name] + 1], type: QueryTypes.SELECT }),
    ),
  );
  const sections = {} as Record<ContactDataSection, Json[]>;
  const truncated: ContactDataSection[] = [];
  names.forEach((name, i) => {
    const items = read[i].map((row) => row.item);
    if (items.length > BOUNDS[name]) truncated.push(name);
    sections[name] = items.slice(0, BOUNDS[name]);
  });
  return { sections, truncated };
}
