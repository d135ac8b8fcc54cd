import { dropSuppressed, parseRecipients, recipientCount } from '../../core/recipients';
import { requestHash } from '../../core/request-hash';

describe('recipients of a send', () => {
  it('counts to + cc + bcc together against the limit of 50', () => {
    const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@x.com`);
    const fifty = parseRecipients({ to: addresses('t', 30), cc: addresses('c', 10), bcc: addresses('b', 10) });
    expect(fifty.ok && recipientCount(fifty.recipients)).toBe(50);
    expect(parseRecipients({ to: addresses('t', 30), cc: addresses('c', 11), bcc: addresses('b', 10) })).toEqual({ ok: false, tooMany: 51 });
  });

  it('several addresses in one string count one each', () => {
    const parsed = parseRecipients({ to: 'a@x.com, "B, b" <b@x.com>, c@x.com' });
    expect(parsed.ok && parsed.recipients.to.map((m) => m.address)).toEqual(['a@x.com', 'b@x.com', 'c@x.com']);
  });

  it('names the field of a bad address', () => {
    expect(parseRecipients({ to: 'a@x.com', cc: 'nope' })).toMatchObject({ ok: false, field: 'cc' });
    expect(parseRecipients({ to: 'a@x.com', replyTo: Array.from({ length: 11 }, (_, i) => `r${i}@x.com`) })).toMatchObject({
      ok: false,
      field: 'replyTo',
    });
  });

  it('drops suppressed copies from every field and reports each once', () => {
    const parsed = parseRecipients({ to: 'a@x.com, B@X.com', cc: 'b@x.com', bcc: 'c@x.com' });
    if (!parsed.ok) throw new Error('parse failed');
    const { recipients, dropped } = dropSuppressed(parsed.recipients, new Map([['b@x.com', 'bounce'], ['c@x.com', 'unsubscribe']]));
    expect(recipients.to.map((m) => m.address)).toEqual(['a@x.com']);
    expect(recipients.cc).toEqual([]);
    expect(recipients.bcc).toEqual([]);
    expect(dropped).toEqual([
      { address: 'B@x.com', reason: 'bounce' },
      { address: 'b@x.com', reason: 'bounce' },
      { address: 'c@x.com', reason: 'unsubscribe' },
    ]);
  });
});

describe('request hash', () => {
  it('ignores key order and undefined fields, and tells different bodies apart', () => {
    expect(requestHash({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(requestHash({ b: { d: 'x', c: [1, 2] }, a: 1, e: undefined }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }));
    expect(requestHash({ a: [1, 2] })).not.toBe(requestHash({ a: [2, 1] }));
  });
});
