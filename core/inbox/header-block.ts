/**
 * The few header fields the SMTP listener needs before it answers 250 (the Message-ID, so a retried delivery
 * finds the row it already wrote), read from the raw message without a MIME parser: the header block ends at
 * the first empty line; folded lines continue the field above them. Full parsing is the inbound workflow's.
 */
export function headerBlockOf(raw: Buffer): string {
  // Headers are ASCII (RFC 5322); latin1 keeps every byte as one character, whatever the body holds.
  const text = raw.subarray(0, Math.min(raw.length, 256 * 1024)).toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  return end ? text.slice(0, end.index) : text;
}

/** The first value of a header field (case-insensitive name), unfolded and trimmed, or null. */
export function headerValue(block: string, name: string): string | null {
  const wanted = name.toLowerCase();
  const lines = block.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const colon = lines[index].indexOf(':');
    if (colon <= 0 || /^[ \t]/.test(lines[index]) || lines[index].slice(0, colon).trim().toLowerCase() !== wanted) continue;
    let value = lines[index].slice(colon + 1);
    while (index + 1 < lines.length && /^[ \t]/.test(lines[index + 1])) value += ` ${lines[++index].trim()}`;
    return value.trim();
  }
  return null;
}
