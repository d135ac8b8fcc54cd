import type { KeyObject } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { domainOf, parseMailboxes } from '../core/addresses';
import { isAppError } from '../core/errors';
import { UNSUBSCRIBE_VARIABLE } from '../core/list-unsubscribe';
import { carriesUnsubscribe, type EmailContent, emailContentOf, personalized } from '../core/message-content';
import { referenceHeaders } from '../core/inbox/replies';
import { htmlToPlainText } from '../core/templates/plain-text';
import type { TemplateVersionContent } from '../core/templates/content';
import type { RenderedTemplate } from '../core/templates/render';
import type { UnsubscribeClaims } from '../core/unsubscribe-token';
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

/** Inline content rendered through the template pool: one piece of content in one format, with its subject. */
function inlineVersion(format: 'html' | 'text', subject: string | null, body: string): TemplateVersionContent {
  return { id: INLINE_VERSION, channels: ['email'], format, subject, body, channelText: null };
}

/** Inline content has no version; the id is only what the render echoes back. */
const INLINE_VERSION = 'inline';

/** The same template and variables fail the same way on every retry (a render over its budget too): the message fails for good. */
async function renderOrFail(templates: TemplateRenderer, version: TemplateVersionContent, variables: Record<string, unknown>, what: string): Promise<RenderedTemplate> {
  try {
    return await templates.render(version, variables);
  } catch (error) {
    if (isAppError(error) && error.code === 'template_invalid') throw new PermanentSendError(`${what}: ${error.message}`);
    throw error;
  }
}

/**
 * The variables a message renders with: its own (a campaign's contact, a send's `variables`), and, when it
 * carries the one-click unsubscribe, `unsubscribe_url`: the very link of its List-Unsubscribe header (the
 * token is a MAC of the same claims, so both are the same URL), for the sender's own footer link.
 */
function variablesOf(message: Message, content: EmailContent, unsubscribeUrl: UnsubscribeUrl | undefined): Record<string, unknown> {
  const variables = content.variables ?? {};
  const parsed = parseMailboxes(message.to[0] ?? '');
  const first = parsed.ok ? parsed.mailboxes[0] : undefined;
  if (!unsubscribeUrl || !first || !carriesUnsubscribe(message.kind, content)) return variables;
  return { ...variables, [UNSUBSCRIBE_VARIABLE]: unsubscribeUrl({ workspaceId: message.workspaceId, messageId: message.id, address: first.address }) };
}

export type UnsubscribeUrl = (claims: UnsubscribeClaims) => string;

/**
 * What a message says, from its own html/text or from the template version pinned when it was accepted.
 * A subject given with the send wins over the template's. Personalized content (core/message-content.ts
 * `personalized`: marketing mail, a send with variables or asking for the unsubscribe link) renders as
 * Liquid exactly as a template does, its subject included; other inline content goes out as written.
 * Without a text part, one is derived from the HTML; text alone stays a text-only email (no tracking,
 * links as written).
 */
export function createEmailRenderer(db: Sequelize, templates: TemplateRenderer, tracking: EmailTracking, unsubscribeUrl?: UnsubscribeUrl) {
  async function fromTemplate(message: Message, content: EmailContent, versionId: string, variables: Record<string, unknown>): Promise<Omit<RenderedEmail, 'links'>> {
    const version = await findTemplateVersion(db, message.workspaceId, versionId);
    if (!version) throw new PermanentSendError('the template version of this message no longer exists');
    const ownSubject = message.subject !== null && personalized(message.kind, content);
    const rendered = await renderOrFail(templates, ownSubject ? { ...version, subject: message.subject } : version, variables, 'template');
    const subject = ownSubject ? rendered.subject : (message.subject ?? rendered.subject);
    if (!subject) throw new PermanentSendError('neither the send nor its template gives a subject');
    return { subject, html: rendered.html ?? undefined, text: rendered.text, headers: {}, templateVersionId: version.id };
  }

  async function fromInline(message: Message, content: EmailContent, variables: Record<string, unknown>): Promise<Omit<RenderedEmail, 'links'>> {
    if (content.html === undefined) {
      const rendered = await renderOrFail(templates, inlineVersion('text', message.subject, content.text ?? ''), variables, 'text');
      return { subject: rendered.subject ?? '', html: undefined, text: rendered.text, headers: {}, templateVersionId: null };
    }
    const rendered = await renderOrFail(templates, inlineVersion('html', message.subject, content.html), variables, 'html');
    const text = content.text === undefined ? rendered.text : (await renderOrFail(templates, inlineVersion('text', null, content.text), variables, 'text')).text;
    return { subject: rendered.subject ?? '', html: rendered.html ?? undefined, text, headers: {}, templateVersionId: null };
  }

  async function contentOf(message: Message, content: EmailContent): Promise<Omit<RenderedEmail, 'links'>> {
    const variables = variablesOf(message, content, unsubscribeUrl);
    if (content.templateVersionId) return fromTemplate(message, content, content.templateVersionId, variables);
    if (personalized(message.kind, content)) return fromInline(message, content, variables);
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
