import { convert } from 'html-to-text';

/**
 * The plain-text part of an email whose HTML has none: what text-only clients, previews and spam
 * filters read. Layout tables become paragraphs (a table of columns is not data), links keep their
 * address in brackets, images are left out, and headings keep their case.
 */
const headings = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
  selector,
  options: { uppercase: false },
}));

export function htmlToPlainText(html: string): string {
  const text = convert(html, {
    wordwrap: 78,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ...headings,
      { selector: 'table', format: 'block' },
      { selector: 'tr', format: 'block' },
      { selector: 'td', format: 'block' },
      { selector: 'th', format: 'block' },
    ],
  });
  // A divider's &nbsp; cell would otherwise leave a line of one space.
  return text.replace(/^[ \t\u00A0]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();
}
