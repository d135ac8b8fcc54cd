import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../core/config';
import { parseMasterKey } from '../../core/secrets';
import { defaultUtm } from '../../core/tracking/link-urls';
import { type TrackedLink, trackHtml, trackingPaths } from '../../core/tracking/tracked-html';
import { signTrackingToken, trackingKey } from '../../core/tracking/tokens';
import { recordSent } from '../../db/repositories/message-delivery';
import { saveRendered } from '../../db/repositories/messages';
import { queueMessages } from './factories';

export const TRACKED_HTML = `<!DOCTYPE html><html><body>
<a href="https://acme.example/"><img src="https://acme.example/logo.png" alt="Acme"></a>
<p>Your order shipped. <a href="https://acme.example/orders/42/">Track it</a></p>
<table><tr><td bgcolor="#2563eb"><a href="https://acme.example/review?from=mail" data-link-id="review-cta">Leave a review</a></td></tr></table>
<footer><a href="https://twitter.com/acme">Twitter</a> <a href="https://acme.example/privacy">Privacy</a></footer>
</body></html>`;

export interface TrackedMessage {
  messageId: string;
  links: TrackedLink[];
  html: string;
  /** Paths of the pixel and of each link's redirect (by link id), as the rendered HTML carries them. */
  pixelPath: string;
  clickPath: (linkId: string) => string;
}

/**
 * A message rendered with tracking and sent `sentAgoMs` ago, as the send path leaves it: its link table
 * stored with its rendering, and the `sent` event at that time. The tracking tests set the clock this way
 * instead of waiting.
 */
export async function createTrackedMessage(db: Sequelize, config: Config, workspaceId: string, options: { sentAgoMs: number; kind?: 'transactional' | 'campaign'; campaignId?: string; utm?: boolean }): Promise<TrackedMessage> {
  const [messageId] = await queueMessages(db, workspaceId, { kind: options.kind ?? 'transactional', count: 1, from: 'shop@mail.acme.example', campaignId: options.campaignId });
  const key = trackingKey(parseMasterKey(config.MASTER_KEY));
  const tracked = trackHtml(TRACKED_HTML, {
    track: true,
    // `utm: false` renders it as a send with disableUtm does: links carry no utm_* parameters.
    utm: options.utm === false ? null : defaultUtm('mail.acme.example', 'transactional'),
    baseUrl: config.PUBLIC_BASE_URL,
    messageId,
    key,
    honeypotTarget: 'https://mail.acme.example/',
  });
  await saveRendered(db, workspaceId, [{ messageId, rendered: { subject: 'Shipped', html: tracked.html, headers: {}, templateVersionId: null, links: tracked.links } }]);
  await recordSent(db, workspaceId, [{ messageId, provider: 'smtp', providerMessageId: `<${randomUUID()}@test>` }]);
  await db.query(`UPDATE message_events SET created_at = now() - make_interval(secs => $2::double precision / 1000) WHERE message_id = $1 AND type = 'sent'`, {
    bind: [messageId, options.sentAgoMs],
  });
  const byId = new Map(tracked.links.map((link) => [link.linkId, link]));
  return {
    messageId,
    links: tracked.links,
    html: tracked.html,
    pixelPath: trackingPaths.open(signTrackingToken(key, { kind: 'open', messageId })),
    clickPath: (linkId) => {
      const link = byId.get(linkId);
      if (!link) throw new Error(`no link ${linkId}`);
      return trackingPaths.click(signTrackingToken(key, { kind: 'click', messageId, position: link.position }));
    },
  };
}
