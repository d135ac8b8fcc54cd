import juice from 'juice';
import { Marked } from 'marked';
import { allowedUrl, type Block, type BlockFieldKind, type LeafBlock } from './blocks';

/**
 * Email-safe HTML: a 600-pixel table layout (what every client from Outlook to Gmail lays out alike),
 * one stylesheet inlined into style attributes by juice (clients that drop <style> still see it), and a
 * media query kept for phones, where columns stack.
 */
const STYLESHEET = `
body, .body { margin: 0; padding: 0; background-color: #f4f5f7; }
.wrapper { background-color: #f4f5f7; }
.wrapper-cell { padding: 24px 0; }
.container { width: 600px; max-width: 600px; background-color: #ffffff; border-radius: 8px; }
.block { padding: 12px 24px; font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif; font-size: 16px; line-height: 24px; color: #1f2937; }
.column .block { padding: 8px 12px; }
.block p { margin: 0 0 12px 0; }
.block ul, .block ol { margin: 0 0 12px 0; padding-left: 24px; }
.block a { color: #2563eb; }
.block h1, .block h2, .block h3 { margin: 0 0 12px 0; font-weight: 700; color: #111827; }
.block h1 { font-size: 28px; line-height: 36px; }
.block h2 { font-size: 22px; line-height: 30px; }
.block h3 { font-size: 18px; line-height: 26px; }
.block .heading { margin: 0; }
.button-cell { border-radius: 6px; }
.button { display: inline-block; padding: 12px 24px; border-radius: 6px; font-weight: 600; text-decoration: none; }
.image { display: block; border: 0; outline: none; text-decoration: none; height: auto; max-width: 100%; }
.divider-line { border-top: 1px solid #e5e7eb; font-size: 1px; line-height: 1px; }
.block-footer { font-size: 12px; line-height: 18px; color: #6b7280; }
.block-footer p { margin: 0 0 6px 0; }
.block-footer a { color: #6b7280; }
.column { vertical-align: top; }
@media only screen and (max-width: 620px) {
  .container { width: 100% !important; border-radius: 0 !important; }
  .column { display: block !important; width: 100% !important; }
}`;

const DEFAULT_BUTTON_COLOR = '#2563eb';
const DEFAULT_BUTTON_TEXT = '#ffffff';

export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Markdown bodies follow CommonMark with GitHub's extensions; in blocks a single newline is also a line break. */
const markdown = new Marked({ gfm: true, breaks: false, async: false });
const blockMarkdown = new Marked({ gfm: true, breaks: true, async: false });

export function markdownToHtml(source: string, options: { lineBreaks?: boolean } = {}): string {
  return (options.lineBreaks ? blockMarkdown : markdown).parse(source, { async: false });
}

/** Wraps table rows in the email document and inlines the stylesheet. */
export function emailDocument(rows: string): string {
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="x-apple-disable-message-reformatting">
<style>${STYLESHEET}</style>
</head>
<body class="body">
<table role="presentation" class="wrapper" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td class="wrapper-cell" align="center">
<table role="presentation" class="container" width="600" cellpadding="0" cellspacing="0" border="0">
${rows}
</table>
</td></tr></table>
</body>
</html>`;
  return juice(html, {
    preserveMediaQueries: true,
    removeStyleTags: true,
    applyWidthAttributes: true,
    // `height: auto` on images would become an invalid height="auto" attribute.
    applyHeightAttributes: false,
  });
}

/** A Markdown body in the same layout as blocks, so both formats look alike. */
export function markdownDocument(renderedMarkdown: string): string {
  return emailDocument(row('block block-text', 'left', markdownToHtml(renderedMarkdown)));
}

/** Renders one block string: the Liquid output, before escaping (plain, URL) or Markdown (markdown). */
export type RenderField = (source: string, kind: BlockFieldKind, path: string) => string;

function row(className: string, align: string, content: string): string {
  return `<tr><td class="${className}" align="${align}" style="text-align: ${align};">${content}</td></tr>`;
}

function linkAttributes(role: string, id: string | undefined): string {
  return ` data-link-role="${role}"${id ? ` data-link-id="${escapeHtml(id)}"` : ''}`;
}

/** Links written in Markdown carry a role too, so tracking can tell content links from footer chrome. */
function tagLinks(html: string, role: string): string {
  return html.replace(/<a\s/g, `<a data-link-role="${role}" `);
}

function safeHref(value: string, kind: 'url' | 'image-url'): string | null {
  const trimmed = value.trim();
  return allowedUrl(trimmed, kind) ? trimmed : null;
}

function leafHtml(block: LeafBlock, path: string, render: RenderField): string {
  switch (block.type) {
    case 'heading': {
      const level = block.level ?? 1;
      const text = escapeHtml(render(block.text, 'plain', `${path}.text`));
      return row('block block-heading', block.align ?? 'left', `<h${level} class="heading">${text}</h${level}>`);
    }
    case 'text':
      return row('block block-text', block.align ?? 'left', tagLinks(markdownToHtml(render(block.text, 'markdown', `${path}.text`), { lineBreaks: true }), 'text'));
    case 'footer':
      return row('block block-footer', block.align ?? 'center', tagLinks(markdownToHtml(render(block.text, 'markdown', `${path}.text`), { lineBreaks: true }), 'chrome'));
    case 'button': {
      const href = safeHref(render(block.url, 'url', `${path}.url`), 'url') ?? '#';
      const label = escapeHtml(render(block.label, 'plain', `${path}.label`));
      const background = block.color ?? DEFAULT_BUTTON_COLOR;
      const foreground = block.textColor ?? DEFAULT_BUTTON_TEXT;
      const align = block.align ?? 'center';
      return row(
        'block block-button',
        align,
        `<table role="presentation" cellpadding="0" cellspacing="0" border="0" align="${align}"><tr>` +
          `<td class="button-cell" bgcolor="${background}" style="background-color: ${background};">` +
          `<a class="button" href="${escapeHtml(href)}" target="_blank"${linkAttributes('cta', block.id)} ` +
          `style="background-color: ${background}; color: ${foreground}; border: 1px solid ${background};">${label}</a>` +
          '</td></tr></table>',
      );
    }
    case 'image': {
      const src = safeHref(render(block.src, 'image-url', `${path}.src`), 'image-url');
      // An image whose address came out unusable is left out rather than shown broken.
      if (!src) return '';
      const align = block.align ?? 'center';
      const alt = block.alt ? escapeHtml(render(block.alt, 'plain', `${path}.alt`)) : '';
      const margin = align === 'center' ? '0 auto' : align === 'right' ? '0 0 0 auto' : '0';
      const width = block.width ? ` width="${block.width}"` : '';
      const widthStyle = block.width ? ` width: ${block.width}px;` : '';
      const img = `<img class="image" src="${escapeHtml(src)}" alt="${alt}"${width} style="margin: ${margin};${widthStyle}">`;
      const href = block.href ? safeHref(render(block.href, 'url', `${path}.href`), 'url') : null;
      const content = href
        ? `<a href="${escapeHtml(href)}" target="_blank"${linkAttributes(block.logo ? 'logo' : 'image', block.id)}>${img}</a>`
        : img;
      return row('block block-image', align, content);
    }
    case 'divider':
      return row(
        'block block-divider',
        'left',
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td class="divider-line" height="1">&nbsp;</td></tr></table>',
      );
  }
}

function blockHtml(block: Block, path: string, render: RenderField): string {
  if (block.type !== 'columns') return leafHtml(block, path, render);
  const width = Math.floor(100 / block.columns.length);
  const cells = block.columns.map((column, columnIndex) => {
    const rows = column.blocks.map((leaf, leafIndex) => leafHtml(leaf, `${path}.columns[${columnIndex}].blocks[${leafIndex}]`, render));
    return (
      `<td class="column" width="${width}%" valign="top">` +
      `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0">${rows.join('')}</table></td>`
    );
  });
  return (
    '<tr><td class="block-columns">' +
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr>${cells.join('')}</tr></table>` +
    '</td></tr>'
  );
}

export function blocksDocument(blocks: readonly Block[], render: RenderField, field = 'body'): string {
  return emailDocument(blocks.map((block, index) => blockHtml(block, `${field}[${index}]`, render)).join('\n'));
}
