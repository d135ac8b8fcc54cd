import { canonicalUrl, defaultUtm, isTrackable, withUtm } from '../../core/tracking/link-urls';
import { linkRole } from '../../core/tracking/link-roles';
import { scanLinks } from '../../core/tracking/link-scan';
import { trackHtml, type TrackingOptions } from '../../core/tracking/tracked-html';
import { trackingKey, verifyTrackingToken } from '../../core/tracking/tokens';

const key = trackingKey(Buffer.alloc(32, 7));
const messageId = '0f8fad5b-d9cb-469f-a165-70867728950e';
const utm = defaultUtm('mail.acme.com', 'transactional');
const options: TrackingOptions = { track: true, utm, baseUrl: 'https://t.acme.io', messageId, key, honeypotTarget: 'https://mail.acme.com/' };

const roleOf = (html: string) => linkRole(scanLinks(html).links[0]);

describe('canonical URLs', () => {
  it.each([
    ['https://Acme.com/', 'https://acme.com'],
    ['https://acme.com/pricing/?utm_source=news&plan=pro', 'https://acme.com/pricing?plan=pro'],
    ['https://acme.com/?UTM_Medium=x', 'https://acme.com'],
    ['https://acme.com/a/#top', 'https://acme.com/a#top'],
    ['https://acme.com/x?next=/?a', 'https://acme.com/x?next=/?a'],
  ])('%s groups as %s', (url, canonical) => {
    expect(canonicalUrl(url)).toBe(canonical);
  });
});

describe('UTM tagging', () => {
  it('adds the three defaults before the fragment', () => {
    expect(withUtm('https://acme.com/a?b=1#f', utm)).toBe('https://acme.com/a?b=1&utm_source=mail.acme.com&utm_medium=email&utm_campaign=transactional#f');
  });

  it('never overwrites a parameter already in the link and leaves the rest as written', () => {
    expect(withUtm('https://acme.com/?utm_campaign=spring&x=%20', utm)).toBe('https://acme.com/?utm_campaign=spring&x=%20&utm_source=mail.acme.com&utm_medium=email');
    expect(withUtm('https://acme.com/?utm_source=a&utm_medium=b&utm_campaign=c', utm)).toBe('https://acme.com/?utm_source=a&utm_medium=b&utm_campaign=c');
  });

  it('tracks only web links', () => {
    expect(['https://a.com', 'HTTP://a.com/x'].every(isTrackable)).toBe(true);
    expect(['mailto:a@b.c', 'tel:+1', '#top', '/relative', 'javascript:alert(1)', 'https://'].some(isTrackable)).toBe(false);
  });
});

describe('link roles from the HTML around a link', () => {
  it.each([
    ['<a data-link-role="cta" href="https://a.com">Buy</a>', 'cta'],
    ['<a href="https://twitter.com/acme"><img src="tw.png"></a>', 'social'],
    ['<a href="https://www.youtube.com/watch?v=1">Watch</a>', 'video'],
    ['<a href="https://a.com"><img src="https://a.com/logo.png" alt="Acme"></a>', 'logo'],
    ['<a href="https://a.com/p"><img src="https://a.com/product.jpg" alt="Shoe"></a>', 'image'],
    ['<footer><a href="https://a.com/privacy">Privacy</a></footer>', 'chrome'],
    ['<table><tr><td class="email-footer"><a href="https://a.com">Acme Inc.</a></td></tr></table>', 'chrome'],
    ['<p><a href="https://a.com/x">Unsubscribe</a></p>', 'chrome'],
    ['<table><tr><td bgcolor="#2563eb"><a href="https://a.com/buy" style="color:#fff">Buy now</a></td></tr></table>', 'cta'],
    ['<a class="btn btn-primary" href="https://a.com/buy">Buy now</a>', 'cta'],
    ['<p>Read <a href="https://a.com/blog">our post</a> today</p>', 'text'],
  ])('%s is %s', (html, role) => {
    expect(roleOf(html)).toBe(role);
  });
});

describe('tracked HTML', () => {
  const html = `<!DOCTYPE html><html><body class="b">
<a href="https://acme.com/" data-link-id="logo-block"><img src="logo.png"></a>
<p>See <a title='x' href='https://acme.com/a?x=1&amp;y=2'>this</a>, <a href=mailto:hi@acme.com>mail us</a>
or <a id="dup" href="https://acme.com/b">b</a> and <a id="dup" href="https://acme.com/c">c</a>.</p>
</body></html>`;

  it('rewrites every web link to a signed redirect, adds a honeypot after <body> and the pixel before </body>, and nothing else changes', () => {
    const tracked = trackHtml(html, options);
    const restored = tracked.html.replace(/<a href="https:\/\/t\.acme\.io\/t\/c\/[^"]+" style="display:none[^>]*><\/a>/, '').replace(/<img src="https:\/\/t\.acme\.io\/t\/o\/[^>]+>/, '');
    expect(restored.replace(/href="https:\/\/t\.acme\.io\/t\/c\/[^"]+"/g, 'href=X')).toBe(html.replace(/href=("[^"]*"|'[^']*')(?=[^>]*>(<img|this|b<|c<))/g, 'href=X'));
    expect(tracked.html).toContain('<body class="b"><a href="https://t.acme.io/t/c/');
    expect(tracked.html).toMatch(/<img src="https:\/\/t\.acme\.io\/t\/o\/[^"]+\.gif"[^>]*>\n?<\/body>/);
    expect(tracked.html).toContain('href=mailto:hi@acme.com');
  });

  it('gives block ids, positional ids for the rest and for repeats, roles, canonical URLs and UTM targets', () => {
    const { links } = trackHtml(html, options);
    expect(links.map(({ position, linkId, url, role, honeypot }) => ({ position, linkId, url, role, honeypot }))).toEqual([
      { position: 0, linkId: 'logo-block', url: 'https://acme.com/', role: 'logo', honeypot: false },
      { position: 1, linkId: 'l1', url: 'https://acme.com/a?x=1&y=2', role: 'text', honeypot: false },
      { position: 2, linkId: 'dup', url: 'https://acme.com/b', role: 'text', honeypot: false },
      { position: 3, linkId: 'l3', url: 'https://acme.com/c', role: 'text', honeypot: false },
      { position: 4, linkId: 'honeypot', url: 'https://mail.acme.com/', role: null, honeypot: true },
    ]);
    expect(links[1].target).toBe('https://acme.com/a?x=1&y=2&utm_source=mail.acme.com&utm_medium=email&utm_campaign=transactional');
    expect(links[0].canonicalUrl).toBe('https://acme.com');
  });

  it('signs each redirect with the message and the link position', () => {
    const tracked = trackHtml(html, options);
    const tokens = [...tracked.html.matchAll(/\/t\/c\/([^"]+)"/g)].map((match) => verifyTrackingToken([key], match[1]));
    expect(tokens).toEqual(expect.arrayContaining([4, 0, 1, 2, 3].map((position) => ({ kind: 'click', messageId, position }))));
    const pixel = /\/t\/o\/([^"]+)\.gif/.exec(tracked.html)?.[1] ?? '';
    expect(verifyTrackingToken([key], pixel)).toEqual({ kind: 'open', messageId });
  });

  it('with tracking off writes UTM into the links themselves: no pixel, no redirect, no honeypot', () => {
    const tracked = trackHtml(html, { ...options, track: false });
    expect(tracked.links).toEqual([]);
    expect(tracked.html).not.toContain('t.acme.io');
    expect(tracked.html).toContain('href="https://acme.com/a?x=1&amp;y=2&amp;utm_source=mail.acme.com&amp;utm_medium=email&amp;utm_campaign=transactional"');
  });

  it('with UTM off redirects to the links as written', () => {
    expect(trackHtml(html, { ...options, utm: null }).links[1].target).toBe('https://acme.com/a?x=1&y=2');
  });

  it('leaves links to the service itself alone and puts pixel and honeypot at the end of a fragment', () => {
    const tracked = trackHtml('<p><a href="https://t.acme.io/unsubscribe/x">Unsubscribe</a></p>', options);
    expect(tracked.links.map((link) => link.linkId)).toEqual(['honeypot']);
    expect(tracked.html.startsWith('<p><a href="https://t.acme.io/unsubscribe/x">Unsubscribe</a></p><a href=')).toBe(true);
  });
});
