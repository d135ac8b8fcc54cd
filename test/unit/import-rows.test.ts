import { fieldsByKey } from '../../core/custom-fields';
import { planBatch } from '../../core/imports/batch-plan';
import { checkMapping } from '../../core/imports/mapping';
import { effectiveMapping } from '../../core/imports/providers';
import { bindColumns, type ImportRow, readRow, type RowReader, splitNames } from '../../core/imports/rows';

function readerFor(header: string[], mapping: Record<string, string>, fields = fieldsByKey([])): RowReader {
  const checked = checkMapping(mapping);
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return { columns: header.length, bound: bindColumns(header, checked.targets, []).bound, fields, extraTags: [], extraLists: [] };
}

describe('import mapping', () => {
  it('unknown targets and bad keys are refused by column; a mapping without an identity is refused as a whole', () => {
    expect(checkMapping({ a: 'email', b: 'town', c: 'attribute:1x' })).toEqual({ ok: false, problems: { b: expect.any(String), c: expect.any(String) } });
    expect(checkMapping({ a: 'attribute:name' })).toEqual({ ok: false, problems: { '': 'Map at least one column to email, phone or telegram' } });
  });

  it('a preset is overridden column by column; only the caller\'s own columns are required in the file', () => {
    const { mapping, required } = effectiveMapping('mailchimp', { 'Phone Number': 'phone', MEMBER_RATING: 'ignore' });
    expect(mapping).toMatchObject({ 'Email Address': 'email', 'Phone Number': 'phone', MEMBER_RATING: 'ignore' });
    expect(required).toEqual(['Phone Number']);
    const checked = checkMapping(mapping);
    if (!checked.ok) throw new Error('preset invalid');
    expect(bindColumns(['Email Address', 'TAGS'], checked.targets, required)).toMatchObject({ missing: ['Phone Number'], bound: [{ column: 'Email Address' }, { column: 'TAGS' }] });
  });
});

describe('reading a row', () => {
  const reader = readerFor(['email', 'phone', 'score', 'tags', 'vip'], { email: 'email', phone: 'phone', score: 'attribute:score', tags: 'tag', vip: 'list:VIP' });

  it('normalises addresses, splits tags, reads list cells as yes/no, and leaves empty cells out', () => {
    expect(readRow(reader, [' Ann@Example.COM ', '', '7', '"a", b ,,', 'yes'], 2)).toEqual({
      ok: true,
      row: { line: 2, identities: [{ channel: 'email', address: 'ann@example.com' }], attributes: { score: '7' }, tags: ['a', 'b'], lists: ['VIP'], blocklisted: false },
    });
    expect(readRow(reader, ['b@example.com', '', '', '', 'no'], 3)).toMatchObject({ ok: true, row: { attributes: {}, tags: [], lists: [] } });
  });

  it('a lists column, as GET /contacts/export writes it, adds the contact to every list it names', () => {
    const exported = readerFor(['email', 'tags', 'lists'], { email: 'email', tags: 'tag', lists: 'lists' });
    expect(readRow(exported, ['ann@example.com', 'new,vip', 'Newsletter, Spring 2026'], 2)).toMatchObject({
      ok: true,
      row: { tags: ['new', 'vip'], lists: ['Newsletter', 'Spring 2026'] },
    });
  });

  it('fails a row naming the column: a bad address, the wrong column count, no address at all', () => {
    expect(readRow(reader, ['nope', '', '', '', ''], 4)).toEqual({ ok: false, error: { line: 4, message: 'email: Expected an address like name@example.com' } });
    expect(readRow(reader, ['a@example.com', '+1415', '', '', ''], 5)).toMatchObject({ ok: false, error: { line: 5, message: expect.stringMatching(/^phone: /) } });
    expect(readRow(reader, ['a@example.com'], 6)).toEqual({ ok: false, error: { line: 6, message: 'Expected 5 columns, found 1' } });
    expect(readRow(reader, ['', '', '1', '', ''], 7)).toEqual({ ok: false, error: { line: 7, message: 'No email, phone or telegram in this row' } });
  });

  it('a custom field gets its type from the text of the cell, and refuses what does not fit', () => {
    const fields = fieldsByKey([{ key: 'score', type: 'number', options: null, archived: false, isSystem: false }]);
    const typed = readerFor(['email', 'score'], { email: 'email', score: 'attribute:score' }, fields);
    expect(readRow(typed, ['a@example.com', '42'], 2)).toMatchObject({ ok: true, row: { attributes: { score: 42 } } });
    expect(readRow(typed, ['a@example.com', 'lots'], 3)).toEqual({ ok: false, error: { line: 3, message: 'attributes.score: Expected a number (custom field of type number)' } });
  });

  it('splits Mailchimp\'s quoted tag lists', () => {
    expect(splitNames('"Customers","VIP"')).toEqual(['Customers', 'VIP']);
  });
});

describe('planning a batch', () => {
  const row = (line: number, emails: string[], extra: Partial<ImportRow> = {}): ImportRow => ({
    line,
    identities: emails.map((address) => ({ channel: 'email', address })),
    attributes: {},
    tags: [],
    lists: [],
    blocklisted: false,
    ...extra,
  });
  let next = 0;
  const newId = () => `new-${(next += 1)}`;

  it('follows the upsert rule row by row: new, then updated by a later row of the same file; two owners fail the row', () => {
    next = 0;
    const plan = planBatch(
      [row(2, ['a@x.com'], { attributes: { n: 1 } }), row(3, ['a@x.com', 'b@x.com'], { attributes: { n: 2 } }), row(4, ['c@x.com', 'old@x.com']), row(5, ['b@x.com', 'old@x.com'])],
      { owners: new Map([['email old@x.com', 'old']]), erased: new Set(), consent: 'unknown', newId },
    );
    expect(plan).toMatchObject({ created: 1, updated: 2, errors: [{ line: 5, message: 'The addresses belong to different contacts; the row was not imported' }] });
    expect(plan.newContacts).toEqual([{ id: 'new-1', attributes: { n: 2 } }]);
    expect(plan.identities).toEqual([
      { channel: 'email', address: 'a@x.com', contactId: 'new-1', consent: 'unknown', primary: true },
      { channel: 'email', address: 'b@x.com', contactId: 'new-1', consent: 'unknown', primary: false },
      { channel: 'email', address: 'c@x.com', contactId: 'old', consent: 'unknown', primary: true },
    ]);
  });

  it('an erased contact\'s address fails its row; a blocklisted row is unsubscribed', () => {
    const plan = planBatch([row(2, ['gone@x.com']), row(3, ['lm@x.com'], { blocklisted: true })], {
      owners: new Map(),
      erased: new Set(['email gone@x.com']),
      consent: 'opted_in',
      newId,
    });
    expect(plan.errors).toEqual([{ line: 2, message: expect.stringContaining('erased contact') }]);
    expect(plan.identities).toMatchObject([{ address: 'lm@x.com', consent: 'opted_out' }]);
    expect(plan.unsubscribed).toEqual([{ channel: 'email', address: 'lm@x.com' }]);
  });
});
