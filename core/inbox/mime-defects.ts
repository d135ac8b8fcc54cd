import { headerValue } from './header-block';

/**
 * Why a raw message is malformed, as far as we can tell without a MIME parser. mailparser reads nearly
 * anything without complaint and silently drops what it cannot place (a body with no header separator, a
 * multipart whose parts never end), so the shape is checked here: a message with defects is still stored and
 * shown as far as it goes, flagged `malformed` with these reasons.
 */
export type MimeDefect = 'unparseable' | 'no_header_separator' | 'multipart_without_boundary' | 'multipart_unterminated' | 'no_from';

const HEADER_FIELD = /^[!-9;-~]+:/;

export function mimeDefects(raw: Buffer, parsedFrom: string | null): MimeDefect[] {
  // latin1 keeps one character per byte whatever the body holds; the delimiters looked for are ASCII.
  const text = raw.toString('latin1');
  const separator = /\r?\n\r?\n/.exec(text);
  const defects: MimeDefect[] = [];
  const block = separator ? text.slice(0, separator.index) : text;
  if (!separator || !HEADER_FIELD.test(block)) defects.push('no_header_separator');
  const contentType = headerValue(block, 'content-type') ?? '';
  if (/^\s*multipart\//i.test(contentType)) {
    const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
    const delimiter = boundary?.[1] ?? boundary?.[2];
    if (!delimiter) defects.push('multipart_without_boundary');
    else if (!text.includes(`--${delimiter}--`)) defects.push('multipart_unterminated');
  }
  if (!parsedFrom) defects.push('no_from');
  return defects;
}
