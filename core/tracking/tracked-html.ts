import type { KeyObject } from 'node:crypto';
import { canonicalUrl, isTrackable, type Utm, withUtm } from './link-urls';
import { type LinkRole, linkRole } from './link-roles';
import { type ScannedLink, scanLinks } from './link-scan';
import { signTrackingToken } from './tokens';

/**
 * An HTML email made ready to send: links tagged with UTM and, when tracked, pointed at the click
 * redirect, an open pixel before `</body>` and a honeypot link after `<body>`. Everything else stays byte
 * for byte as written. The link table it returns is what the redirect may send a click to, and nothing else.
 */
export interface TrackedLink {
  /** The link's place in the table (the click token names it). */
  position: number;
  /** The block id the HTML gives (data-link-id, data-block-id, id), else positional `l0`, `l1`, ... */
  linkId: string;
  /** The destination as written. */
  url: string;
  /** Where a click is sent: `url` with UTM applied. */
  target: string;
  canonicalUrl: string;
  role: LinkRole | null;
  /** The link no reader can see (the honeypot): whoever follows it is a machine. */
  honeypot: boolean;
}

export interface TrackingOptions {
  /** Pixel and redirects (false with disableTracking: only UTM is written into the links). */
  track: boolean;
  /** Null with disableUtm. */
  utm: Utm | null;
  /** PUBLIC_BASE_URL: where the pixel and redirects are served, and links never rewritten. */
  baseUrl: string;
  messageId: string;
  key: KeyObject;
  /** Where a click on the honeypot goes (a scanner must still get a 302). */
  honeypotTarget: string;
}

export const HONEYPOT_LINK_ID = 'honeypot';
const EXPLICIT_ID = /^[^\s"'<>]{1,64}$/;
const POSITIONAL_ID = /^l\d+$/;

export const trackingPaths = {
  open: (token: string) => `/t/o/${token}.gif`,
  click: (token: string) => `/t/c/${token}`,
};

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

function explicitId(link: ScannedLink): string | null {
  const own = link.attributes['data-link-id'] ?? link.attributes['data-block-id'] ?? link.attributes.id;
  const block = own ?? link.ancestors.findLast((element) => element.attributes['data-block-id'] !== undefined)?.attributes['data-block-id'];
  // An id shaped like a positional one could collide with one: it is positional then.
  return block !== undefined && EXPLICIT_ID.test(block) && !POSITIONAL_ID.test(block) && block !== HONEYPOT_LINK_ID ? block : null;
}

function tableOf(links: ScannedLink[], utm: Utm | null): TrackedLink[] {
  const taken = new Set<string>();
  return links.map((link, position) => {
    const given = explicitId(link);
    // Ids are unique within a message (the link statistics join on them): a repeated one is positional.
    const linkId = given && !taken.has(given) ? given : `l${position}`;
    taken.add(linkId);
    const url = link.href.trim();
    return { position, linkId, url, target: utm ? withUtm(url, utm) : url, canonicalUrl: canonicalUrl(url), role: linkRole(link), honeypot: false };
  });
}

/** Replaces spans of the source, each [start, end), given in document order. */
function splice(html: string, edits: Array<{ start: number; end: number; text: string }>): string {
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += html.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + html.slice(at);
}

export function trackHtml(html: string, options: TrackingOptions): { html: string; links: TrackedLink[] } {
  const scanned = scanLinks(html);
  // Our own pages (unsubscribe, the redirects themselves) are never wrapped again.
  const links = scanned.links.filter((link) => isTrackable(link.href) && !link.href.trim().startsWith(options.baseUrl));
  const table = tableOf(links, options.utm);
  const url = (path: string) => `${options.baseUrl.replace(/\/$/, '')}${path}`;
  const token = (position: number) => signTrackingToken(options.key, { kind: 'click', messageId: options.messageId, position });
  const edits = links.map((link, index) => {
    const entry = table[index];
    const href = options.track ? url(trackingPaths.click(token(entry.position))) : entry.target;
    return { start: link.hrefStart, end: link.hrefEnd, text: `href="${escapeAttribute(href)}"` };
  });
  if (!options.track) return { html: splice(html, edits), links: [] };

  const honeypot: TrackedLink = {
    position: table.length,
    linkId: HONEYPOT_LINK_ID,
    url: options.honeypotTarget,
    target: options.honeypotTarget,
    canonicalUrl: canonicalUrl(options.honeypotTarget),
    role: null,
    honeypot: true,
  };
  // Empty, so no client shows it even where display:none is ignored; first, so a scanner walking the links meets it.
  const trap = `<a href="${escapeAttribute(url(trackingPaths.click(token(honeypot.position))))}" style="display:none;mso-hide:all" aria-hidden="true" tabindex="-1"></a>`;
  const pixelToken = signTrackingToken(options.key, { kind: 'open', messageId: options.messageId });
  const pixel = `<img src="${escapeAttribute(url(trackingPaths.open(pixelToken)))}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" aria-hidden="true">`;
  const end = scanned.bodyEnd ?? html.length;
  const start = scanned.bodyStart ?? end;
  const all = [{ start, end: start, text: trap }, ...edits, { start: end, end, text: pixel }].sort((a, b) => a.start - b.start);
  return { html: splice(html, all), links: [...table, honeypot] };
}
