import type { TemplateVersionContent } from '../../core/templates/content';
import { renderTemplate } from '../../core/templates/render';

function blocksVersion(blocks: unknown[]): TemplateVersionContent {
  return { id: 'v1', channels: ['email'], format: 'blocks', subject: null, body: JSON.stringify(blocks), channelText: null };
}

function render(blocks: unknown[], variables: Record<string, unknown> = {}) {
  return renderTemplate(blocksVersion(blocks), variables);
}

describe('the blocks format renders email-safe HTML', () => {
  it('is a 600-pixel table layout with the stylesheet inlined and only the phone media query left in <style>', () => {
    const { html } = render([{ type: 'text', text: 'Hello' }]);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<table role="presentation" class="container" width="600"');
    expect(html).toMatch(/<td class="block block-text"[^>]* style="[^"]*font-family:[^"]*"/);
    const styles = [...(html ?? '').matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1].trim());
    expect(styles).toHaveLength(1);
    expect(styles[0]).toMatch(/^@media only screen and \(max-width: 620px\)/);
  });

  it('heading: escaped text at the chosen level', () => {
    const { html } = render([{ type: 'heading', text: 'Hi {{ name }} & friends', level: 2, align: 'center' }], { name: '<Ada>' });
    expect(html).toMatch(/<td class="block block-heading" align="center"[^>]*><h2 class="heading"[^>]*>Hi &lt;Ada&gt; &amp; friends<\/h2>/);
  });

  it('text: Markdown with line breaks, variables escaped, links tagged as text', () => {
    const { html } = render([{ type: 'text', text: 'Line **one**\nline [two]({{ url }}) {{ note }}' }], {
      url: 'https://example.com/?a=1&b=2',
      note: '<img src=x>',
    });
    expect(html).toContain('Line <strong>one</strong><br>');
    expect(html).toMatch(/<a data-link-role="text" href="https:\/\/example\.com\/\?a=1&amp;b=2"/);
    expect(html).toContain('&lt;img src=x&gt;');
    expect(html).not.toContain('<img src=x>');
  });

  it('button: a bulletproof table cell with the colour, the link and its tracking id', () => {
    const { html } = render([{ type: 'button', id: 'cta-main', label: 'Pay {{ amount }}', url: '{{ pay_url }}', color: '#10b981' }], {
      amount: '€10',
      pay_url: 'https://pay.example/i/1',
    });
    expect(html).toMatch(/<td class="button-cell" bgcolor="#10b981"/);
    expect(html).toMatch(
      /<a class="button" href="https:\/\/pay\.example\/i\/1" target="_blank" data-link-role="cta" data-link-id="cta-main" style="[^"]*background-color: #10b981;[^"]*">Pay €10<\/a>/,
    );
  });

  it('button: a link that comes out of a variable as a script URL is neutralised', () => {
    const { html } = render([{ type: 'button', label: 'Open', url: '{{ url }}' }], { url: 'javascript:alert(1)' });
    expect(html).toContain('href="#"');
    expect(html).not.toContain('javascript:');
  });

  it('image: sized, aligned, linked as a logo; an unusable address leaves the image out', () => {
    const { html } = render([
      { type: 'image', src: 'https://cdn.example.com/logo.png', alt: 'Acme', width: 120, href: 'https://acme.example', logo: true },
      { type: 'image', src: '{{ photo }}', alt: 'broken' },
      { type: 'image', src: 'cid:chart', alt: 'Chart' },
    ], { photo: 'file:///etc/passwd' });
    expect(html).toMatch(/<a href="https:\/\/acme\.example" target="_blank" data-link-role="logo"[^>]*><img class="image" src="https:\/\/cdn\.example\.com\/logo\.png" alt="Acme" width="120"/);
    expect(html).not.toContain('broken');
    expect(html).toContain('src="cid:chart"');
  });

  it('divider, footer and columns', () => {
    const { html } = render([
      { type: 'divider' },
      { type: 'columns', columns: [{ blocks: [{ type: 'text', text: 'Left' }] }, { blocks: [{ type: 'text', text: 'Middle' }] }, { blocks: [{ type: 'text', text: 'Right' }] }] },
      { type: 'footer', text: 'Acme · [Unsubscribe]({{ unsubscribe_url }})' },
    ], { unsubscribe_url: 'https://acme.example/u/1' });
    expect(html).toMatch(/<td class="divider-line" height="1" style="border-top: 1px solid #e5e7eb;/);
    expect(html?.match(/<td class="column" width="33%" valign="top"/g)).toHaveLength(3);
    expect(html).toMatch(/<td class="block block-footer" align="center"[^>]*font-size: 12px/);
    expect(html).toContain('<a data-link-role="chrome" href="https://acme.example/u/1"');
  });

  it('the plain-text part reads in block order, with link addresses and without the layout', () => {
    const { text } = render([
      { type: 'heading', text: 'Your receipt' },
      { type: 'text', text: 'Total: {{ total }}' },
      { type: 'button', label: 'View order', url: 'https://shop.example/o/1' },
      { type: 'divider' },
      { type: 'footer', text: 'Acme Inc.' },
    ], { total: '$12' });
    expect(text).toBe('Your receipt\n\nTotal: $12\n\nView order [https://shop.example/o/1]\n\nAcme Inc.');
  });
});
