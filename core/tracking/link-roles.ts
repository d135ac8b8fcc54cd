import type { Attributes, ScannedLink } from './link-scan';

/**
 * What a link is, from the HTML around it, so engagement can tell a click on the content (a call to
 * action, a link in the text) from one on the logo, an image, the header or footer, or a social icon.
 * Block templates say it outright (`data-link-role`); hand-written HTML is read for the usual signs.
 */
export const LINK_ROLES = ['logo', 'image', 'cta', 'text', 'social', 'video', 'chrome'] as const;
export type LinkRole = (typeof LINK_ROLES)[number];

/** Clicks on these are not content clicks (the spec's contentClicks and isContent). */
const NOT_CONTENT: ReadonlySet<LinkRole> = new Set(['logo', 'image', 'chrome', 'social']);

export function isContentRole(role: LinkRole | null): boolean {
  return role === null || !NOT_CONTENT.has(role);
}

const SOCIAL_HOSTS = [
  'facebook.com', 'fb.com', 'twitter.com', 'x.com', 'instagram.com', 'linkedin.com', 'tiktok.com', 'pinterest.com',
  'threads.net', 'mastodon.social', 'bsky.app', 'reddit.com', 'discord.gg', 'discord.com', 't.me', 'wa.me', 'snapchat.com',
];
const VIDEO_HOSTS = ['youtube.com', 'youtu.be', 'vimeo.com', 'wistia.com', 'wistia.net', 'loom.com', 'twitch.tv', 'dailymotion.com'];
const VIDEO_FILE = /\.(mp4|mov|webm|m3u8)$/i;
const CHROME_ELEMENTS = new Set(['header', 'footer', 'nav']);
const CHROME_NAMES = /(^|[\s_-])(header|footer|nav|navbar|preheader|masthead|legal)([\s_-]|$)/i;
const CHROME_TEXT = /^(unsubscribe|manage (your )?(email )?preferences|update (your )?preferences|view (this email )?(it )?in (your |a )?browser|view online|privacy( policy)?|terms( of (service|use))?)$/i;
const CTA_NAMES = /(^|[\s_-])(btn|button|cta)([\s_-]|$)/i;
const LOGO = /logo/i;

function hostOf(href: string): string | null {
  try {
    return new URL(href).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return null;
  }
}

const onHost = (host: string | null, hosts: readonly string[]) => host !== null && hosts.some((known) => host === known || host.endsWith(`.${known}`));

const names = (attributes: Attributes) => `${attributes.class ?? ''} ${attributes.id ?? ''}`;

/** Styled like a button: bulletproof buttons put the colour on the link or its cell and pad the link. */
function looksLikeButton(link: ScannedLink): boolean {
  const { attributes } = link;
  if (attributes.role === 'button' || CTA_NAMES.test(names(attributes))) return true;
  const style = (attributes.style ?? '').toLowerCase();
  if (/background(-color)?\s*:/.test(style) && /padding\s*:|display\s*:\s*inline-block/.test(style)) return true;
  const parent = link.ancestors.at(-1);
  return parent !== undefined && parent.name === 'td' && (parent.attributes.bgcolor !== undefined || CTA_NAMES.test(names(parent.attributes)));
}

function inChrome(link: ScannedLink): boolean {
  return link.ancestors.some((element) => CHROME_ELEMENTS.has(element.name) || CHROME_NAMES.test(names(element.attributes))) || CHROME_TEXT.test(link.text);
}

/** The role a template gave, else the first sign that fits, most specific first; `text` when none does. */
export function linkRole(link: ScannedLink): LinkRole {
  const given = link.attributes['data-link-role'];
  if ((LINK_ROLES as readonly string[]).includes(given)) return given as LinkRole;
  const host = hostOf(link.href);
  if (onHost(host, SOCIAL_HOSTS)) return 'social';
  if (onHost(host, VIDEO_HOSTS) || VIDEO_FILE.test(link.href.split(/[?#]/)[0])) return 'video';
  const imageOnly = link.images.length > 0 && link.text === '';
  if (LOGO.test(names(link.attributes)) || (imageOnly && link.images.some((image) => LOGO.test(`${image.alt ?? ''} ${image.src ?? ''} ${names(image)}`)))) {
    return 'logo';
  }
  if (imageOnly) return 'image';
  if (inChrome(link)) return 'chrome';
  if (looksLikeButton(link)) return 'cta';
  return 'text';
}
