import fc from 'fast-check';
import { formatMailbox, type Mailbox, parseMailboxes } from '../../core/addresses';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const domain = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'org', 'example', 'co.uk')).map(([labels, tld]) => [...labels, tld].join('.'));
const localPart = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,20}(\.[A-Za-z0-9_+-]{1,10}){0,2}$/);
/** Display names as people write them: words of any script and the punctuation that forces quoting, trimmed. */
const displayName = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.constantFrom('Doe,', 'J.', '"Jo"', '(x)', 'a\\b', '<b>', '@', ';')), { minLength: 1, maxLength: 4 })
  // Control characters are refused by the parser (a property of their own below); runs of spaces are folded by it.
  // eslint-disable-next-line no-control-regex
  .map((words) => words.join(' ').replace(/[\u0000-\u001f\u007f]/g, '').replace(/\s+/g, ' ').trim())
  .filter((name) => name.length > 0);
const mailbox: fc.Arbitrary<Mailbox> = fc.record({
  name: fc.option(displayName, { nil: null }),
  address: fc.tuple(localPart, domain).map(([local, host]) => `${local}@${host}`),
});

describe('address parsing properties', () => {
  it('parsing any text or list of texts answers ok or an error, and never throws', () => {
    const input = fc.oneof(fc.string({ unit: 'binary' }), fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }));
    fc.assert(
      fc.property(input, (value) => {
        const parsed = parseMailboxes(value);
        return parsed.ok ? Array.isArray(parsed.mailboxes) : typeof parsed.error === 'string';
      }),
      { numRuns: 2_000 },
    );
  });

  it('a formatted mailbox parses back to itself, display name and address', () => {
    fc.assert(fc.property(mailbox, (given) => expect(parseMailboxes(formatMailbox(given))).toEqual({ ok: true, mailboxes: [given] })), { numRuns: 1_000 });
  });

  it('a control character anywhere is refused, never read as another recipient', () => {
    const control = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));
    fc.assert(fc.property(mailbox, control, fc.nat(60), (given, inserted, at) => {
      const text = formatMailbox(given);
      const cut = at % (text.length + 1);
      return !parseMailboxes(`${text.slice(0, cut)}${inserted}${text.slice(cut)}`).ok;
    }));
  });

  it('whatever parses, formatted and parsed again, gives the same mailboxes', () => {
    // Unquoted names, stray brackets and separators as people type them, so most inputs parse.
    const piece = fc.oneof(mailbox.map((box) => box.address), fc.string({ unit: 'grapheme-ascii', maxLength: 6 }), fc.constantFrom('<', '>', ',', '"', ' ', '\\'));
    const typed = fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(typed, (text) => {
        const first = parseMailboxes(text);
        if (!first.ok) return;
        expect(parseMailboxes(first.mailboxes.map(formatMailbox))).toEqual(first);
      }),
      { numRuns: 2_000 },
    );
  });
});
