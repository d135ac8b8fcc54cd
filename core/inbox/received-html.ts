import sanitizeHtml from 'sanitize-html';

/**
 * Received HTML as the API shows it (docs/inboxes.md, received HTML). Anyone can mail an inbox, and an agent's
 * client renders what the thread route answers: the sender's markup must not run there, phone home or dress
 * itself up as the client. The raw markup stays stored and is answered on request (`?html=raw`).
 *
 * - Dropped with their content: script, style, iframe, object, embed, form controls, svg, math, noscript,
 *   template; and any tag not on the list (meta refresh, base, link) without its content being lost.
 * - Attributes: only those listed per tag, so every event handler (`on*`), `srcset`, `background`, `formaction`
 *   goes. Links keep http(s), mailto and tel targets, open in a new tab and pass no referrer or opener.
 * - Remote content: an image from the network is a read receipt the sender planted (a tracking pixel), so its
 *   `src` moves to `data-blocked-src` (a client may offer "show images"); embedded `cid:` and `data:image/`
 *   images stay. Inline styles keep only plain properties whose values load nothing (no `url(`, no
 *   `expression(`), and never `position`, which could lay a fake prompt over the client.
 */

const ALLOWED_TAGS = [...sanitizeHtml.defaults.allowedTags, 'img', 'font', 'center', 'big'];

/** A style value that loads nothing and runs nothing (no url(), no legacy IE expression(), no escapes to hide them). */
const PLAIN_VALUE = /^(?!.*(?:url|expression|image-set|@import|\\))[^<>]*$/i;

const STYLED = [
  'color', 'background-color', 'font', 'font-family', 'font-size', 'font-style', 'font-weight', 'line-height', 'letter-spacing',
  'text-align', 'text-decoration', 'text-transform', 'vertical-align', 'white-space', 'margin', 'margin-top', 'margin-right',
  'margin-bottom', 'margin-left', 'padding', 'padding-top', 'padding-right', 'padding-bottom', 'padding-left', 'border',
  'border-top', 'border-right', 'border-bottom', 'border-left', 'border-color', 'border-style', 'border-width', 'border-radius',
  'border-collapse', 'width', 'max-width', 'min-width', 'height', 'max-height', 'min-height', 'display',
];

const EMBEDDED_IMAGE = /^(?:cid:|data:image\/(?:png|gif|jpe?g|webp);base64,)/i;

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'template', 'iframe', 'object', 'svg', 'math'],
  allowedAttributes: {
    '*': ['style', 'align', 'valign', 'dir', 'lang', 'title', 'class'],
    a: ['href', 'name', 'target', 'rel'],
    img: ['src', 'alt', 'width', 'height', 'data-blocked-src'],
    td: ['colspan', 'rowspan', 'width', 'height', 'bgcolor'],
    th: ['colspan', 'rowspan', 'width', 'height', 'bgcolor'],
    table: ['width', 'cellpadding', 'cellspacing', 'border', 'bgcolor'],
    font: ['color', 'face', 'size'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['cid', 'data'] },
  allowedStyles: { '*': Object.fromEntries(STYLED.map((property) => [property, [PLAIN_VALUE]])) },
  allowProtocolRelative: false,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, target: '_blank', rel: 'noopener noreferrer nofollow' } }),
    img: (tagName, attribs) => {
      const { src, ...rest } = attribs;
      if (!src || EMBEDDED_IMAGE.test(src.trim())) return { tagName, attribs: attribs };
      return { tagName, attribs: { ...rest, 'data-blocked-src': src } };
    },
  },
};

/** The received markup, safe to render in an agent's client. */
export function sanitizeReceivedHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
