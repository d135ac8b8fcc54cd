import { QueryTypes, type Sequelize } from 'sequelize';
import type { UtmTouchParams } from '../../core/tracking/link-urls';

/** An open or click, classified, as it is stored: a message event, and its share of the engagement counters. */
export interface TrackingEvent {
  messageId: string;
  type: 'open' | 'click';
  classification: string;
  reason: string;
  linkUrl: string | null;
  linkId: string | null;
  linkRole: string | null;
  /** A human click on a content link (contentClicks). */
  isContent: boolean;
  /** The clicked link's canonical URL and UTM parameters (null when it carries none): a human click on any tracked link is a touch. */
  touch: ({ url: string } & UtmTouchParams) | null;
  at: Date;
  data: Record<string, unknown>;
}

/**
 * Stores a batch of opens and clicks and moves their messages' engagement in one statement: one
 * multi-row insert into message_events (where webhooks pick them up) and one update per message touched,
 * together, so the counters never disagree with the events, with the touches of human clicks on
 * tracked links, tagged or not (for the message's contact). Hits of messages that no longer exist are dropped by the
 * join. Returns how many events were stored.
 */
export async function recordTrackingEvents(db: Sequelize, events: readonly TrackingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const column = <T>(pick: (event: TrackingEvent) => T) => events.map(pick);
  const rows = await db.query<{ stored: string }>(
    `WITH hits AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::timestamptz[], $10::text[],
         $11::text[], $12::text[], $13::text[], $14::text[])
         AS h(message_id, type, classification, reason, link_url, link_id, link_role, is_content, at, data, touch_url, utm_source, utm_medium, utm_campaign)
     ),
     touched AS (
       INSERT INTO utm_touches (id, workspace_id, contact_id, message_id, source, medium, campaign, url, occurred_at,
                                is_content, canonical_url, kind, campaign_id, automation_id, journey_node_id)
       SELECT gen_random_uuid(), m.workspace_id, m.contact_id, h.message_id, h.utm_source, h.utm_medium, h.utm_campaign, h.touch_url, h.at,
              h.is_content, l.canonical_url, m.kind, m.campaign_id, m.automation_id, m.journey_node_id
       FROM hits h JOIN messages m ON m.id = h.message_id
       LEFT JOIN message_links l ON l.message_id = h.message_id AND l.link_id = h.link_id
       WHERE h.type = 'click' AND h.classification = 'human' AND h.touch_url IS NOT NULL
       RETURNING 1
     ),
     inserted AS (
       INSERT INTO message_events (id, workspace_id, message_id, type, classification, reason, link_url, link_id, link_role, data, created_at)
       SELECT gen_random_uuid(), m.workspace_id, h.message_id, h.type, h.classification, h.reason, h.link_url, h.link_id, h.link_role, h.data::jsonb, h.at
       FROM hits h JOIN messages m ON m.id = h.message_id
       RETURNING 1
     ),
     moved AS (
       SELECT message_id,
         count(*) FILTER (WHERE type = 'open' AND classification = 'human') AS opens_human,
         count(*) FILTER (WHERE type = 'open' AND classification <> 'human') AS opens_machine,
         count(*) FILTER (WHERE type = 'click' AND classification = 'human') AS clicks,
         count(*) FILTER (WHERE type = 'click' AND classification = 'human' AND is_content) AS content_clicks,
         (array_agg(link_url ORDER BY at DESC) FILTER (WHERE type = 'click' AND classification = 'human'))[1] AS last_link_url,
         (array_agg(link_role ORDER BY at DESC) FILTER (WHERE type = 'click' AND classification = 'human'))[1] AS last_link_role,
         coalesce(array_agg(DISTINCT link_url) FILTER (WHERE type = 'click' AND classification = 'human'), '{}') AS clicked,
         max(at) FILTER (WHERE classification = 'human') AS last_human_at
       FROM hits GROUP BY message_id
     ),
     -- Locked in one order, so two API processes flushing batches that share messages cannot deadlock.
     locked AS (SELECT id FROM messages WHERE id IN (SELECT message_id FROM moved) ORDER BY id FOR UPDATE),
     updated AS (
       UPDATE messages m SET
         opens_human = m.opens_human + moved.opens_human,
         opens_machine = m.opens_machine + moved.opens_machine,
         clicks = m.clicks + moved.clicks,
         content_clicks = m.content_clicks + moved.content_clicks,
         last_link_url = COALESCE(moved.last_link_url, m.last_link_url),
         last_link_role = CASE WHEN moved.last_link_url IS NULL THEN m.last_link_role ELSE moved.last_link_role END,
         clicked_links = ARRAY(SELECT DISTINCT unnest(m.clicked_links || moved.clicked)),
         -- Engagement moves with human events only: a scanner's visit is not the message's last activity.
         -- updated_at is left alone: it tells the reconciler when the delivery last moved, and leaving every
         -- indexed column unchanged lets Postgres update the row in place (HOT) at the rate hits arrive.
         last_event_at = GREATEST(m.last_event_at, moved.last_human_at)
       FROM moved JOIN locked ON locked.id = moved.message_id WHERE m.id = moved.message_id
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM inserted) AS stored`,
    {
      bind: [
        column((e) => e.messageId), column((e) => e.type), column((e) => e.classification), column((e) => e.reason),
        column((e) => e.linkUrl), column((e) => e.linkId), column((e) => e.linkRole), column((e) => e.isContent),
        column((e) => e.at.toISOString()), column((e) => JSON.stringify(e.data)),
        column((e) => e.touch?.url ?? null), column((e) => e.touch?.source ?? null), column((e) => e.touch?.medium ?? null), column((e) => e.touch?.campaign ?? null),
      ],
      type: QueryTypes.SELECT,
    },
  );
  return Number(rows[0]?.stored ?? 0);
}
