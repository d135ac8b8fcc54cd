import fc from 'fast-check';
import { ATTRIBUTE_OPERATORS, parseAudienceRules } from '../../core/audience-rules';
import { type FieldDefinition, fieldsByKey } from '../../core/custom-fields';
import { CHANNELS, CONSENTS } from '../../core/identities';
import { BindParams } from '../../db/bind-params';
import { audienceCondition } from '../../db/segment-query';

const fields = fieldsByKey([
  { key: 'born', type: 'date', options: null, archived: false, isSystem: false },
  { key: 'topics', type: 'multiselect', options: ['a', 'b'], archived: false, isSystem: false },
] satisfies FieldDefinition[]);
const now = new Date('2026-06-01T00:00:00.000Z');

/** Every generated text carries this mark, and quotes and comment starts an injection would need. */
const MARK = '§';
const text = fc.string({ maxLength: 12 }).map((body) => `${MARK}'";--$1${body}`);
/** Numbers of at least five digits, so one spliced into the SQL would show as a run no placeholder has. */
const number = fc.oneof(fc.integer({ min: 10_000, max: 1_000_000 }), fc.double({ min: 10_000, max: 1e9, noNaN: true }));
const scalar = fc.oneof(text, number, fc.boolean());
const date = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((at) => at.toISOString());
const days = fc.integer({ min: 10_000, max: 36_500 });
const uuid = fc.uuid({ version: 4 });

const attribute = fc
  .record({ key: fc.oneof(text.map((key) => key.slice(0, 100)), fc.constantFrom('born', 'topics')), operator: fc.constantFrom(...ATTRIBUTE_OPERATORS) })
  .chain(({ key, operator }) => {
    const base = { type: 'attribute', key, operator };
    switch (operator) {
      case 'exists':
      case 'not_exists':
        return fc.constant(base);
      case 'within_last':
        return days.map((n) => ({ ...base, days: n }));
      case 'eq':
      case 'neq':
        return scalar.map((value) => ({ ...base, value }));
      case 'contains':
      case 'not_contains':
        return text.map((value) => ({ ...base, value }));
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return number.map((value) => ({ ...base, value }));
      case 'between':
        return fc.oneof(fc.tuple(number, number), fc.tuple(date, date)).map((value) => ({ ...base, value }));
      case 'in':
      case 'not_in':
        return fc.array(fc.oneof(text, number), { minLength: 1, maxLength: 5 }).map((value) => ({ ...base, value }));
      case 'before':
      case 'after':
        return date.map((value) => ({ ...base, value }));
    }
  });
const identity = fc.record(
  {
    type: fc.constant('identity'),
    operator: fc.constantFrom('has', 'has_not'),
    channel: fc.constantFrom(...CHANNELS),
    consent: fc.constantFrom(...CONSENTS),
    verified: fc.boolean(),
    isPrimary: fc.boolean(),
  },
  { requiredKeys: ['type', 'operator', 'channel'] },
);
const tag = fc.record({ type: fc.constant('tag'), operator: fc.constantFrom('has', 'has_not'), tagId: uuid });
const list = fc.record({ type: fc.constant('list'), operator: fc.constantFrom('member', 'not_member'), listId: uuid });
const created = fc.oneof(
  fc.record({ type: fc.constant('created'), operator: fc.constantFrom('before', 'after'), value: date }),
  fc.record({ type: fc.constant('created'), operator: fc.constant('between'), value: fc.tuple(date, date) }),
  fc.record({ type: fc.constant('created'), operator: fc.constant('within_last'), days }),
);
const event = fc.record(
  {
    type: fc.constant('event'),
    name: text,
    operator: fc.constant('at_least'),
    count: fc.oneof(fc.constant(1), fc.integer({ min: 10_000, max: 1_000_000 })),
    withinDays: days,
    properties: fc.dictionary(text, scalar, { maxKeys: 3 }),
  },
  { requiredKeys: ['type', 'name', 'operator', 'count'] },
);
const condition = fc.oneof(attribute, identity, tag, list, created, event);
/** Engagement conditions are refused before compiling (core/audience-checks.ts), so they are not generated. */
const tree = fc.letrec((tie) => ({
  group: fc.record({ type: fc.constant('group'), operator: fc.constantFrom('and', 'or'), rules: fc.array(tie('rule'), { minLength: 1, maxLength: 4 }) }),
  rule: fc.oneof({ depthSize: 'small', maxDepth: 3 }, condition, condition, tie('group')),
})).group;

describe('segment rule compilation properties', () => {
  it('any valid rule tree compiles to SQL in which every value is a bind parameter, each used, none spliced', () => {
    fc.assert(
      fc.property(tree, ({ operator, rules }) => {
        const definition = parseAudienceRules({ operator, rules });
        const params = new BindParams();
        const workspace = params.add('ws', 'uuid');
        const sql = audienceCondition(definition, { fields, now }, params, workspace);
        expect(sql).not.toContain(MARK);
        // $1 is the caller's workspace, used only by the conditions that need it; every other one is the tree's.
        const placeholders = [...sql.matchAll(/\$(\d+)::/g)].map((match) => Number(match[1])).filter((index) => index !== 1);
        expect(new Set(placeholders)).toEqual(new Set(params.values.slice(1).map((_value, index) => index + 2)));
        // Once the placeholders are gone, no number of the rules is left in the text.
        expect(sql.replace(/\$\d+::/g, '')).not.toMatch(/\d{5}/);
      }),
      { numRuns: 500 },
    );
  });
});
