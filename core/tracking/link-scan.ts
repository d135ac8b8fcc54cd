import { Parser } from 'htmlparser2';

/**
 * One pass of a real HTML parser (htmlparser2, forgiving like a mail client) over an email's HTML: every
 * `<a href>` with where its href attribute stands in the source (so it can be replaced without
 * re-serialising, and so without changing a byte of the rest), and what surrounds it (its ancestors, its
 * text and images), from which its role is inferred. Also where `<body>` opens and closes, for the pixel.
 */
export type Attributes = Record<string, string>;

export interface ScannedLink {
  /** Order of the link in the document, from 0. */
  position: number;
  /** The href as a browser reads it (entities decoded). */
  href: string;
  /** The href attribute's span in the source, [start, end). */
  hrefStart: number;
  hrefEnd: number;
  attributes: Attributes;
  /** Enclosing elements, outermost first. */
  ancestors: Array<{ name: string; attributes: Attributes }>;
  /** The link's text, whitespace collapsed. */
  text: string;
  /** Attributes of the images inside the link. */
  images: Attributes[];
}

export interface ScannedHtml {
  links: ScannedLink[];
  /** Just after `<body …>`, if the document has one. */
  bodyStart: number | null;
  /** At `</body>`, if written. */
  bodyEnd: number | null;
}

interface OpenLink extends Omit<ScannedLink, 'text'> {
  textParts: string[];
  depth: number;
}

export function scanLinks(html: string): ScannedHtml {
  const stack: Array<{ name: string; attributes: Attributes }> = [];
  const links: ScannedLink[] = [];
  let hrefSpan: { start: number; end: number } | null = null;
  let open: OpenLink | null = null;
  let bodyStart: number | null = null;
  let bodyEnd: number | null = null;

  const finish = () => {
    if (!open) return;
    const { position, href, hrefStart, hrefEnd, attributes, ancestors, images, textParts } = open;
    links.push({ position, href, hrefStart, hrefEnd, attributes, ancestors, images, text: textParts.join(' ').replace(/\s+/g, ' ').trim() });
    open = null;
  };

  const parser: Parser = new Parser(
    {
      onattribute(name) {
        // The span of the attribute just read: [startIndex, endIndex) is `href="…"` exactly.
        if (name === 'href' && !hrefSpan) hrefSpan = { start: parser.startIndex, end: parser.endIndex };
      },
      onopentag(name, attributes) {
        if (name === 'a') {
          // Browsers close an open link when another starts; so do we.
          finish();
          if (hrefSpan && attributes.href !== undefined) {
            open = {
              position: links.length,
              href: attributes.href,
              hrefStart: hrefSpan.start,
              hrefEnd: hrefSpan.end,
              attributes,
              ancestors: stack.map((element) => ({ ...element })),
              images: [],
              textParts: [],
              depth: stack.length,
            };
          }
        } else if (name === 'img' && open) {
          open.images.push(attributes);
        } else if (name === 'body' && bodyStart === null) {
          bodyStart = parser.endIndex + 1;
        }
        hrefSpan = null;
        stack.push({ name, attributes });
      },
      ontext(text) {
        if (open) open.textParts.push(text);
      },
      onclosetag(name, implied) {
        stack.pop();
        if (name === 'body' && !implied) bodyEnd = parser.startIndex;
        if (open && stack.length <= open.depth) finish();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  finish();
  return { links, bodyStart, bodyEnd };
}
