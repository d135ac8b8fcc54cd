import type { Response, Router } from 'express';
import type { Sequelize } from 'sequelize';
import { UNSUBSCRIBE_PATH } from '../../core/list-unsubscribe';
import { type Keyring, macKeys } from '../../core/secrets';
import { unsubscribeTokens } from '../../core/unsubscribe-token';
import { confirmationPage, invalidLinkPage, unsubscribedPage } from './pages';
import { createUnsubscribeService } from './service';

/**
 * Pages that must never be cached, framed, indexed, or leak their URL (the token) in a Referer; the only
 * thing they may do is post their own form back to us.
 */
const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Robots-Tag': 'noindex',
};

function sendPage(res: Response, status: number, html: string): void {
  res.status(status).set(PAGE_HEADERS).type('html').send(html);
}

/**
 * The public unsubscribe endpoints under PUBLIC_BASE_URL, outside /api/v1 and without a key (decisions,
 * "Message lifecycle"). GET only shows a confirmation page: mail scanners and link previews follow GETs,
 * and must not unsubscribe anyone. POST unsubscribes: the RFC 8058 one-click body
 * `List-Unsubscribe=One-Click` a mailbox provider sends, or the page's own form; the body is not read, so
 * a plain form with any body works too. A token that is not genuine answers 404 and changes nothing, and
 * (v2 links) is refused before anything is read.
 */
export function unsubscribeRoutes(app: Router, deps: { db: Sequelize; keyring: Keyring; acceptV1Links: boolean }): void {
  const unsubscribes = createUnsubscribeService(deps.db, unsubscribeTokens(macKeys(deps.keyring), { acceptV1: deps.acceptV1Links }));

  app.get(`${UNSUBSCRIBE_PATH}/:token`, async (req, res) => {
    const recipient = await unsubscribes.recipientOf(req.params.token);
    if (!recipient) return sendPage(res, 404, invalidLinkPage());
    sendPage(res, 200, confirmationPage(recipient.address));
  });

  app.post(`${UNSUBSCRIBE_PATH}/:token`, async (req, res) => {
    const done = await unsubscribes.unsubscribe(req.params.token);
    if (!done) return sendPage(res, 404, invalidLinkPage());
    const { workspaceId, messageId } = done.recipient;
    if (done.first) req.log.info({ workspaceId, messageId }, 'recipient unsubscribed');
    sendPage(res, 200, unsubscribedPage(done.recipient.address));
  });
}
