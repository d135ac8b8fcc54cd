import type { KeyObject } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { domainOf, parseMailboxes } from '../core/addresses';
import { isAppError } from '../core/errors';
import { type EmailContent, emailContentOf } from '../core/message-content';
import { referenceHeaders } from '../core/inbox/replies';
import { htmlToPlainText } from '../core/templates/plain-text';
import type { RenderedTemplate } from '../core/templates/render';
import { defaultUtm } from '../core/tracking/link-urls';
import { type TrackedLink, trackHtml } from '../core/tracking/tracked-html';
import type { Message, RenderedEmail } from '../db/repositories/messages';
import { findTemplateVersion } from '../db/repositories/templates';
import type { TemplateRenderer } from '../infra/template-renderer';
import { PermanentSendError } from '../core/delivery';

export interface EmailTracking {
  /** PUBLIC_BASE_URL: where the pixel and click redirects are served. */
  baseUrl: string;
  /** Signs the tracking tokens (derived from MASTER_KEY). */
  key: KeyObject;
}

/**
 * Open and click tracking and UTM tagging of the HTML part (docs/tracking.md), done here, once, so the
 * stored rendering (and its link table) is what every attempt sends. Text parts keep links as written.
 */
function trackedHtml(message: Message, content: EmailContent, html: string, tracking: EmailTracking): { html: string; links: TrackedLink[] } {
  if (content.disableTracking && content.disableUtm) return { html, links: [] };
  const parsed = parseMailboxes(message.fromAddress ?? '');
  const domain = parsed.ok && parsed.mailboxes[0] ? domainOf(parsed.mailboxes[0].address) : '';
  const campaign = content.utmCampaign ?? (message.kind === 'transactional' ? 'transactional' : message.kind);
  return trackHtml(html, {
    track: !content.disableTracking,
    utm: content.disableUtm ? null : defaultUtm(domain, campaign),
    baseUrl: tracking.baseUrl,
    messageId: message.id,
    key: tracking.key,
    honeypotTarget: `https://${domain}/`,
  });
}

/**
 * What a message says, from its own html/text or from the template version pinned when it was accepted.
 * A subject given with the send wins over the template's. Without a text part, one is derived from the
 * HTML; text alone stays a text-only email (no tracking, links as written).
 */
export function createEmailRenderer(db: Sequelize, templates: TemplateRenderer, tracking: EmailTracking) {
  async function contentOf(message: Message, content: EmailContent): Promise<Omit<RenderedEmail, 'links'>> {
    if (content.templateVersionId) {
      const version = await findTemplateVersion(db, message.workspaceId, content.templateVersionId);
      if (!version) throw new PermanentSendError('the template version of this message no longer exists');
      let rendered: RenderedTemplate;
      try {
        rendered = await templates.render(version, content.variables ?? {});
      } catch (error) {
        // The same template and variables fail the same way on every retry (a render over its budget too).
        if (isAppError(error) && error.code === 'template_invalid') throw new PermanentSendError(`template: ${error.message}`);
        throw error;
      }
      const subject = message.subject ?? rendered.subject;
      if (!subject) throw new PermanentSendError('neither the send nor its template gives a subject');
      return { subject, html: rendered.html ?? undefined, text: rendered.text, headers: {}, templateVersionId: version.id };
    }
    const html = content.html;
    const text = content.text ?? (html !== undefined ? htmlToPlainText(html) : undefined);
    return { subject: message.subject ?? '', html, text, headers: {}, templateVersionId: null };
  }

  return async (message: Message): Promise<RenderedEmail> => {
    const content = emailContentOf(message.content);
    const rendered = { ...(await contentOf(message, content)), headers: referenceHeaders(content.inReplyTo, content.references) };
    if (rendered.html === undefined) return rendered;
    const tracked = trackedHtml(message, content, rendered.html, tracking);
    return { ...rendered, html: tracked.html, links: tracked.links };
  };
}
