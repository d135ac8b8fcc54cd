import { domainOf, formatMailbox, normaliseAddress, parseMailboxes } from '../../core/addresses';

describe('recipient parsing', () => {
  it('reads a bare address, a display name, and several in one string', () => {
    expect(parseMailboxes('a@x.com, Bob <b@Y.com>')).toEqual({
      ok: true,
      mailboxes: [
        { name: null, address: 'a@x.com' },
        { name: 'Bob', address: 'b@y.com' },
      ],
    });
  });

  it('a comma inside a quoted display name does not separate recipients', () => {
    const parsed = parseMailboxes('"Doe, John" <j@y.com>, k@z.com');
    expect(parsed).toEqual({
      ok: true,
      mailboxes: [
        { name: 'Doe, John', address: 'j@y.com' },
        { name: null, address: 'k@z.com' },
      ],
    });
  });

  it('takes arrays, each item in any of the forms', () => {
    const parsed = parseMailboxes(['a@x.com', 'B <b@x.com>, c@x.com']);
    expect(parsed.ok && parsed.mailboxes.map((mailbox) => mailbox.address)).toEqual(['a@x.com', 'b@x.com', 'c@x.com']);
  });

  it('lower-cases only the domain and turns an internationalised domain into its ASCII form', () => {
    expect(normaliseAddress('John.Doe@Example.COM')).toEqual({ ok: true, address: 'John.Doe@example.com' });
    expect(normaliseAddress('u@exämple.com')).toEqual({ ok: true, address: 'u@xn--exmple-cua.com' });
  });

  it.each([
    ['a@b.com\r\nBcc: evil@x.com', /control characters/],
    ['a@b.com\nX-Injected: 1', /control characters/],
    ['not an address', /not a valid email address/],
    ['x@', /not a valid/],
    ['@x.com', /not a valid/],
    ['a@localhost', /not a valid/],
    ['a@1.2.3.4', /not a valid/],
    ['a@-x.com', /not a valid/],
    ['a..b@x.com', /not a valid/],
    [`${'l'.repeat(65)}@x.com`, /not a valid/],
    ['', /No address/],
  ])('refuses %p', (input, error) => {
    const parsed = parseMailboxes(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });

  it('formats mailboxes for headers, quoting names that need it', () => {
    expect(formatMailbox({ name: null, address: 'a@x.com' })).toBe('a@x.com');
    expect(formatMailbox({ name: 'Bob', address: 'b@x.com' })).toBe('Bob <b@x.com>');
    expect(formatMailbox({ name: 'Doe, "J"', address: 'j@x.com' })).toBe('"Doe, \\"J\\"" <j@x.com>');
    expect(domainOf('a@sub.x.com')).toBe('sub.x.com');
  });

  it('round-trips: a formatted mailbox parses back to itself', () => {
    const mailbox = { name: 'Doe, John (Sales)', address: 'j@x.com' };
    expect(parseMailboxes(formatMailbox(mailbox))).toEqual({ ok: true, mailboxes: [mailbox] });
  });
});
