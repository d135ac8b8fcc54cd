import fc from 'fast-check';
import { findUnsafeText } from '../../core/unsafe-text';

describe('unsafe text in parsed JSON and queries', () => {
  it('a NUL or a lone surrogate in a value is found at its dotted path', () => {
    expect(findUnsafeText({ to: ['a@example.org', 'b\u0000@example.org'] })).toBe('to.1');
    expect(findUnsafeText({ metadata: { plan: 'pro\uD800' } })).toBe('metadata.plan');
    expect(findUnsafeText({ subject: '\uDC00 tail' })).toBe('subject');
    expect(findUnsafeText('\u0000')).toBe('');
  });

  it('a bad key is reported at the object holding it, never echoed', () => {
    expect(findUnsafeText({ headers: { 'X-\u0000': 'v' } })).toBe('headers');
    expect(findUnsafeText({ '\uD83D': 1 })).toBe('');
  });

  it('the first offending field in document order is the one reported', () => {
    expect(findUnsafeText({ a: 'ok', b: ['\u0000'], c: '\u0000' })).toBe('b.0');
    expect(findUnsafeText({ a: { '\u0000': 1 }, b: '\u0000' })).toBe('a');
  });

  it('well-formed text, emoji (surrogate pairs) included, is never flagged', () => {
    expect(findUnsafeText({ name: 'party 🎉', list: ['𝄞', 1, null, true] })).toBeNull();
    // Strings of whole code points (which excludes lone surrogates) without NUL, in any JSON shape.
    const safeString = fc.string({ unit: 'grapheme' }).map((text) => text.replaceAll('\u0000', ''));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, safeString, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(safeString, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(fc.property(json, (value) => findUnsafeText(value) === null));
  });

  it('any lone surrogate or NUL put anywhere in a string is found', () => {
    const bad = fc.oneof(fc.constant('\u0000'), fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)));
    fc.assert(
      fc.property(fc.string(), bad, fc.string(), fc.nat(4), (before, unsafe, after, depth) => {
        // A high surrogate followed by a low one is a valid pair, so keep neighbours from completing it.
        const text = `${before.replace(/[\uD800-\uDFFF]/g, '')}x${unsafe}x${after.replace(/[\uD800-\uDFFF]/g, '')}`;
        let value: unknown = text;
        for (let level = 0; level < depth; level += 1) value = { [`k${level}`]: [value] };
        const path = Array.from({ length: depth }, (_, level) => `k${depth - 1 - level}.0`).join('.');
        return findUnsafeText(value) === path;
      }),
    );
  });
});
