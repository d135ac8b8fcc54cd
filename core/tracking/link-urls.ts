/**
 * The URLs of tracked links: which links are tracked, their canonical form (the grouping key of link
 * statistics) and automatic UTM tagging.
 */

/** Only web links are tracked: mailto:, tel:, anchors and relative links stay as written. */
export function isTrackable(href: string): boolean {
  return /^https?:\/\/[^/?#\s]/i.test(href.trim());
}

/**
 * The grouping key of a link: without utm_* parameters and without a trailing slash, so
 * `https://a.com/x/?utm_source=n` and `https://a.com/x` count as one link. Host and scheme are lowercased
 * by the URL parser; other parameters keep their order.
 */
export function canonicalUrl(href: string): string {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return href.trim();
  }
  for (const name of [...url.searchParams.keys()]) {
    if (name.toLowerCase().startsWith('utm_')) url.searchParams.delete(name);
  }
  if (url.pathname.length > 1 && url.pathname.endsWith('/')) url.pathname = url.pathname.replace(/\/+$/, '');
  const text = url.toString();
  // The root path prints as "/" whatever pathname is set to: drop the slash after the host.
  return url.pathname === '/' ? text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)\//i, '$1') : text;
}

export interface Utm {
  source: string;
  medium: string;
  campaign: string;
}

/** The decisions' defaults: the sending domain, `email`, and the campaign or automation name or "transactional". */
export function defaultUtm(sendingDomain: string, campaign: string): Utm {
  return { source: sendingDomain, medium: 'email', campaign };
}

/**
 * Adds the UTM parameters a link lacks, leaving every parameter already present (and the rest of the
 * link, byte for byte) as written. Appended before the fragment, as browsers expect.
 */
export function withUtm(href: string, utm: Utm): string {
  const [beforeHash, ...hashParts] = href.split('#');
  const hash = hashParts.length ? `#${hashParts.join('#')}` : '';
  const query = beforeHash.includes('?') ? beforeHash.slice(beforeHash.indexOf('?') + 1) : '';
  const present = new Set(new URLSearchParams(query).keys());
  const missing = (
    [
      ['utm_source', utm.source],
      ['utm_medium', utm.medium],
      ['utm_campaign', utm.campaign],
    ] as const
  ).filter(([name]) => !present.has(name));
  if (missing.length === 0) return href;
  const added = new URLSearchParams(missing.map(([name, value]): [string, string] => [name, value])).toString();
  const separator = !beforeHash.includes('?') ? '?' : beforeHash.endsWith('?') || beforeHash.endsWith('&') ? '' : '&';
  return `${beforeHash}${separator}${added}${hash}`;
}

/** What a UTM touch records: the link's utm_* parameters, each null when absent. */
export interface UtmTouchParams {
  source: string | null;
  medium: string | null;
  campaign: string | null;
}

/** The UTM parameters a clicked link carried, or null when it carried none (the touch then has no campaign fields). */
export function utmOf(href: string): UtmTouchParams | null {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null;
  }
  const params = { source: url.searchParams.get('utm_source'), medium: url.searchParams.get('utm_medium'), campaign: url.searchParams.get('utm_campaign') };
  return params.source === null && params.medium === null && params.campaign === null ? null : params;
}
