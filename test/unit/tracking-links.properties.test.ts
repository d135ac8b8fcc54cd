import fc from 'fast-check';
import { defaultUtm, withUtm } from '../../core/tracking/link-urls';
import { scanLinks } from '../../core/tracking/link-scan';
import { trackHtml, type TrackingOptions } from '../../core/tracking/tracked-html';
import { trackingKey, verifyTrackingToken } from '../../core/tracking/tokens';

const messageId = '0f8fad5b-d9cb-469f-a165-70867728950e';
const baseUrl = 'https://t.acme.io';
const utm = defaultUtm('mail.acme.com', 'transactional');
const options: TrackingOptions = {
  track: true,
  utm,
  baseUrl,
  messageId,
  key: trackingKey(Buffer.alloc(32, 7)),
  honeypotTarget: 'https://mail.acme.com/',
};

const webLink = fc.webUrl({ withQueryParameters: true, withFragments: true });
/** Links that are not tracked: other schemes, anchors, relative paths, and the service's own pages. */
const otherLink = fc.oneof(
  fc.constantFrom('mailto:a@b.example', 'tel:+15550100', '#top', '/relative/path', 'javascript:void(0)', 'ftp://files.example/x', 'https://'),
  fc.webPath().map((path) => `${baseUrl}/u${path}`),
);
const words = fc.stringMatching(/^[A-Za-z0-9 .,!?]{0,20}$/);
const anchor = fc.record({ href: fc.oneof(webLink, otherLink), text: words });
const email = fc.record({ before: words, anchors: fc.array(anchor, { maxLength: 8 }), after: words });

interface Email {
  before: string;
  anchors: Array<{ href: string; text: string }>;
  after: string;
}

function document({ before, anchors, after }: Email): string {
  const body = anchors.map((link) => `<p>${link.text}<a href="${link.href.replace(/&/g, '&amp;')}">${link.text || 'here'}</a></p>`).join('');
  return `<html><body><p>${before}</p>${body}<p>${after}</p></body></html>`;
}

const tracked = (href: string) => /^https?:\/\/[^/?#\s]/i.test(href) && !href.startsWith(baseUrl);

describe('link rewriting properties', () => {
  it('tracking never drops or adds a link beyond the honeypot, and keeps every other link as written', () => {
    fc.assert(
      fc.property(email, (given) => {
        const result = trackHtml(document(given), options);
        const out = scanLinks(result.html).links;
        // The honeypot comes first, right after <body>; then every link of the source, in order.
        expect(out).toHaveLength(given.anchors.length + 1);
        const web = given.anchors.filter((link) => tracked(link.href));
        expect(result.links.filter((link) => !link.honeypot).map((link) => link.url)).toEqual(web.map((link) => link.href));
        given.anchors.forEach((link, index) => {
          const href = out[index + 1].href;
          if (!tracked(link.href)) {
            expect(href).toBe(link.href);
            return;
          }
          const position = web.indexOf(link);
          const token = href.slice(`${baseUrl}/t/c/`.length);
          expect(verifyTrackingToken([options.key], token)).toEqual({ kind: 'click', messageId, position });
          expect(result.links[position].target).toBe(withUtm(link.href, utm));
        });
      }),
      { numRuns: 300 },
    );
  });

  it('without tracking, only web links change, and only by their UTM parameters', () => {
    fc.assert(
      fc.property(email, (given) => {
        const result = trackHtml(document(given), { ...options, track: false });
        const out = scanLinks(result.html).links.map((link) => link.href);
        expect(out).toEqual(given.anchors.map((link) => (tracked(link.href) ? withUtm(link.href, utm) : link.href)));
        expect(result.links).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('the text around the links stays byte for byte', () => {
    fc.assert(
      fc.property(email, (given) => {
        const source = document(given);
        const withoutHrefs = (html: string) => html.replace(/ href="[^"]*"/g, '');
        const result = trackHtml(source, options);
        const strip = (html: string) => withoutHrefs(html).replace(/<a style="display:none[^>]*><\/a>/, '').replace(/<img [^>]*aria-hidden="true">/, '');
        expect(strip(result.html)).toBe(withoutHrefs(source));
      }),
      { numRuns: 300 },
    );
  });
});
