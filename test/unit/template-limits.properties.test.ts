import fc from 'fast-check';
import { type AppError, isAppError } from '../../core/errors';
import { parseBlocks } from '../../core/templates/blocks';
import { parseLiquid } from '../../core/templates/liquid';

/** What a template's parser may do with any input: answer, or refuse with a 422 template_invalid; nothing else. */
function answersOrRefuses(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (error) {
    return isAppError(error) && error.code === 'template_invalid';
  }
}

function refusal(parse: () => unknown): AppError | null {
  try {
    parse();
    return null;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
}

describe('template limit properties', () => {
  it('any text or JSON as a blocks body parses or is refused as template_invalid, never another error', () => {
    const body = fc.oneof(fc.string({ unit: 'binary' }), fc.json(), fc.jsonValue().map((value) => JSON.stringify([value])));
    fc.assert(fc.property(body, (text) => answersOrRefuses(() => parseBlocks(text))), { numRuns: 1_000 });
  });

  it('any text as Liquid parses or is refused as template_invalid, in both escapings', () => {
    const pieces = fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{{', '}}', '{%', '%}', ' if ', ' for x in y ', 'endif', 'endfor', '|', ' default: ', 'include', '"')), { maxLength: 12 });
    fc.assert(
      fc.property(pieces, fc.constantFrom('html' as const, 'text' as const), (parts, escaping) => answersOrRefuses(() => parseLiquid(parts.join(''), escaping, 'body'))),
      { numRuns: 1_000 },
    );
  });

  it('a document holds 1 to 100 blocks: within, it parses; outside, the refusal names the body', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 130 }), (count) => {
        const body = JSON.stringify(Array.from({ length: count }, () => ({ type: 'divider' })));
        const refused = refusal(() => parseBlocks(body));
        expect(refused === null).toBe(count >= 1 && count <= 100);
        if (refused) expect(refused.details.field).toBe('body');
      }),
      { numRuns: 200 },
    );
  });

  it('each string field is accepted up to its limit and refused above it, the refusal naming the field', () => {
    const limits = [
      { block: (value: string) => ({ type: 'heading', text: value }), field: 'text', max: 500 },
      { block: (value: string) => ({ type: 'text', text: value }), field: 'text', max: 20_000 },
      { block: (value: string) => ({ type: 'button', label: value, url: 'https://acme.example' }), field: 'label', max: 200 },
      // The schema bounds a URL's length; which URLs are allowed is checked apart (allowedUrl).
      { block: (value: string) => ({ type: 'button', label: 'Go', url: value }), field: 'url', max: 2_000 },
      { block: (value: string) => ({ type: 'footer', text: value }), field: 'text', max: 5_000 },
    ];
    fc.assert(
      fc.property(fc.constantFrom(...limits), fc.integer({ min: -3, max: 3 }), fc.nat(3), ({ block, field, max }, offset, position) => {
        const length = Math.max(1, max + offset);
        const blocks = [...Array.from({ length: position }, () => ({ type: 'divider' })), block('x'.repeat(length))];
        const refused = refusal(() => parseBlocks(JSON.stringify(blocks)));
        expect(refused === null).toBe(length <= max);
        if (refused) expect(refused.details.field).toBe(`body[${position}].${field}`);
      }),
      { numRuns: 300 },
    );
  });
});
