/**
 * The decisions: marketing sends (campaign, automation) carry a one-click unsubscribe (RFC 8058);
 * transactional sends carry none unless asked (`listUnsubscribe: true` on POST /emails: core/message-content.ts).
 */
const MARKETING_KINDS: ReadonlySet<string> = new Set(['campaign', 'automation']);

export function isMarketing(kind: string): boolean {
  return MARKETING_KINDS.has(kind);
}

/** The variable that holds a message's one-click link in its own content (activities/email-render.ts). */
export const UNSUBSCRIBE_VARIABLE = 'unsubscribe_url';

/** Whether Liquid content outputs the unsubscribe link (`{{ unsubscribe_url }}`, with or without filters). */
export function mentionsUnsubscribeUrl(...sources: Array<string | null | undefined>): boolean {
  return sources.some((source) => source !== null && source !== undefined && /\{\{-?\s*unsubscribe_url\b/.test(source));
}

/** The public path of unsubscribe links, outside /api/v1 (the decisions: under PUBLIC_BASE_URL, no key). */
export const UNSUBSCRIBE_PATH = '/unsubscribe';

export function unsubscribeUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${UNSUBSCRIBE_PATH}/${token}`;
}

/**
 * RFC 2369's List-Unsubscribe with RFC 8058's List-Unsubscribe-Post, which tells a mailbox provider that a
 * POST of `List-Unsubscribe=One-Click` to the URL unsubscribes without a page. Both must be covered by the
 * DKIM signature (activities/dkim.ts) or providers ignore them.
 */
export function listUnsubscribeHeaders(url: string): Record<string, string> {
  return { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}
