import type { KeyObject } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import { verifyTrackingToken } from '../../core/tracking/tokens';
import type { TrackingHitBuffer } from './hit-buffer';
import type { HitGate } from './hit-gate';
import type { TrackedMessageCache } from './message-cache';

/** The smallest transparent GIF: what every pixel request gets back, genuine or not. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

export interface TrackingRouteDeps {
  /** The tracking keys of the whole keyring: a link signed before a MASTER_KEY rotation still counts. */
  keys: readonly KeyObject[];
  messages: TrackedMessageCache;
  hits: TrackingHitBuffer;
  gate: HitGate;
}

function hitOf(req: Request) {
  return { method: req.method, userAgent: req.get('user-agent') ?? '', ip: req.ip ?? '', at: Date.now() };
}

/**
 * The public tracking endpoints (decisions.md, "Tracking and unsubscribe"): outside /api/v1, no key, the
 * signed token the only credential. Both answer before anything is written: hits go to the buffer, unless
 * the gate refuses them (a client past its limit, a replay). A click past the limit is still redirected:
 * a person behind a busy address must reach the link; only the count is lost, and a forged token never
 * gets this far (its MAC is checked before anything is read).
 * Express answers HEAD through these GET routes, so a link checker's HEAD is seen (and classified bot).
 */
export function trackingRoutes(deps: TrackingRouteDeps): Router {
  const router = Router();

  // Always an image with no-store, so every open reaches us and a forged token learns nothing.
  router.get('/t/o/:file', async (req: Request<{ file: string }>, res: Response) => {
    const hit = hitOf(req);
    const token = req.params.file.replace(/\.gif$/, '');
    const target = verifyTrackingToken(deps.keys, token);
    // Asked before answering (one Redis round trip, no database), so a hit is settled when its answer leaves.
    const stored = target?.kind === 'open' && (await deps.gate.admit(req, token));
    res.set({ 'Content-Type': 'image/gif', 'Cache-Control': 'no-store, no-cache, must-revalidate, private', Pragma: 'no-cache', Expires: '0' });
    res.status(200).end(PIXEL);
    if (stored && target) deps.hits.record({ kind: 'open', messageId: target.messageId, link: null, sentAt: null, ...hit });
  });

  // Only to the stored target; anything else is 404 and goes nowhere. A bot's click still gets its 302.
  router.get('/t/c/:token', async (req: Request<{ token: string }>, res: Response) => {
    const hit = hitOf(req);
    const target = verifyTrackingToken(deps.keys, req.params.token);
    const message = target?.kind === 'click' ? await deps.messages.get(target.messageId) : null;
    const link = target?.kind === 'click' ? message?.links.get(target.position) : undefined;
    if (!target || !message || !link) {
      res.status(404).type('text/plain').set('Cache-Control', 'no-store').send('Not found');
      return;
    }
    const stored = await deps.gate.admit(req, req.params.token);
    // location() encodes what a header cannot carry; no body, so none of redirect()'s content negotiation.
    res.location(link.target).set('Cache-Control', 'no-store').status(302).end();
    if (stored) deps.hits.record({ kind: 'click', messageId: target.messageId, link, sentAt: message.sentAt?.getTime() ?? null, ...hit });
  });

  return router;
}
