import { audienceIssues, referencedIds } from '../../core/audience-checks';
import { type AudienceRules, formatPath, MAX_CONDITIONS, parseAudienceRules } from '../../core/audience-rules';
import { type FieldDefinition, fieldsByKey } from '../../core/custom-fields';
import { AppError } from '../../core/errors';

const TAG = '11111111-1111-4111-8111-111111111111';
const LIST = '22222222-2222-4222-8222-222222222222';

function fieldErrorsOf(value: unknown): Record<string, string[]> {
  try {
    parseAudienceRules(value);
  } catch (error) {
    if (error instanceof AppError) return (error.details.issues as { fieldErrors: Record<string, string[]> }).fieldErrors;
  }
  throw new Error('expected the rules to be refused');
}

const nest = (depth: number): unknown =>
  depth === 0 ? { type: 'tag', operator: 'has', tagId: TAG } : { type: 'group', operator: 'and', rules: [nest(depth - 1)] };

describe('the rule tree schema', () => {
  it('a valid tree parses, and the root gets its type', () => {
    const rules = parseAudienceRules({
      operator: 'or',
      rules: [
        { type: 'attribute', key: 'plan', operator: 'in', value: ['pro', 'team'] },
        { type: 'group', operator: 'and', rules: [{ type: 'event', name: 'purchase', operator: 'at_least', count: 2, withinDays: 30 }] },
      ],
    });
    expect(rules.type).toBe('group');
    expect(rules.rules).toHaveLength(2);
  });

  it('the bad node is named by its path from the definition', () => {
    const errors = fieldErrorsOf({
      operator: 'and',
      rules: [
        { type: 'attribute', key: 'a', operator: 'eq', value: 1 },
        { type: 'group', operator: 'or', rules: [{ type: 'attribute', key: 'a', operator: 'equals', value: 1 }] },
      ],
    });
    expect(Object.keys(errors)).toEqual(['definition.rules[1].rules[0].operator']);
  });

  it.each([
    ['between without a pair', { type: 'attribute', key: 'a', operator: 'between', value: 1 }, 'definition.rules[0].value'],
    ['exists with a value', { type: 'attribute', key: 'a', operator: 'exists', value: 1 }, 'definition.rules[0].value'],
    ['within_last without days', { type: 'attribute', key: 'a', operator: 'within_last' }, 'definition.rules[0].days'],
    ['days on another operator', { type: 'attribute', key: 'a', operator: 'eq', value: 1, days: 3 }, 'definition.rules[0].days'],
    ['gt with a string', { type: 'attribute', key: 'a', operator: 'gt', value: '3' }, 'definition.rules[0].value'],
    ['in with a boolean', { type: 'attribute', key: 'a', operator: 'in', value: [true] }, 'definition.rules[0].value'],
    ['before with a non-date', { type: 'attribute', key: 'a', operator: 'before', value: 'soon' }, 'definition.rules[0].value'],
    ['at_least 0', { type: 'event', name: 'e', operator: 'at_least', count: 0 }, 'definition.rules[0].count'],
    ['an unknown type', { type: 'mood', operator: 'has' }, 'definition.rules[0].type'],
    ['a bad tag id', { type: 'tag', operator: 'has', tagId: 'x' }, 'definition.rules[0].tagId'],
    ['created between with one date', { type: 'created', operator: 'between', value: '2024-01-01' }, 'definition.rules[0].value'],
  ])('%s is refused at its field', (_case, rule, path) => {
    expect(Object.keys(fieldErrorsOf({ operator: 'and', rules: [rule] }))).toEqual([path]);
  });

  it('an unknown key in a node is refused, since ignoring it would silently widen the audience', () => {
    expect(Object.keys(fieldErrorsOf({ operator: 'and', rules: [{ type: 'identity', operator: 'has', channel: 'email', consnet: 'opted_in' }] }))).toEqual([
      'definition.rules[0]',
    ]);
  });

  it('groups nest at most 5 levels deep, counting the root', () => {
    expect(() => parseAudienceRules({ operator: 'and', rules: [nest(4)] })).not.toThrow();
    expect(Object.keys(fieldErrorsOf({ operator: 'and', rules: [nest(5)] }))).toEqual(['definition.rules[0].rules[0].rules[0].rules[0].rules[0]']);
  });

  it('a tree has at most 100 conditions', () => {
    const group = (size: number) => ({ type: 'group', operator: 'or', rules: Array.from({ length: size }, () => ({ type: 'tag', operator: 'has', tagId: TAG })) });
    expect(() => parseAudienceRules({ operator: 'and', rules: [group(50), group(50)] })).not.toThrow();
    expect(fieldErrorsOf({ operator: 'and', rules: [group(50), group(50), group(1)] })).toEqual({ definition: [`At most ${MAX_CONDITIONS} conditions in a rule tree`] });
  });

  it('paths read like the JSON a client wrote', () => {
    expect(formatPath('definition', ['rules', 1, 'rules', 0, 'operator'])).toBe('definition.rules[1].rules[0].operator');
    expect(formatPath('', ['rules', 0])).toBe('rules[0]');
  });
});

describe('the checks against the workspace', () => {
  const fields = fieldsByKey([
    { key: 'plan', type: 'select', options: ['free', 'pro'], archived: false, isSystem: false },
    { key: 'score', type: 'number', options: null, archived: false, isSystem: false },
    { key: 'born', type: 'date', options: null, archived: false, isSystem: false },
    { key: 'topics', type: 'multiselect', options: ['a', 'b'], archived: false, isSystem: false },
  ] satisfies FieldDefinition[]);
  const context = { fields, tagIds: new Set([TAG]), listIds: new Set([LIST]) };
  const issuesOf = (rules: unknown[]) => audienceIssues(parseAudienceRules({ operator: 'and', rules }), context);

  it('operators must suit the field\'s type', () => {
    expect(issuesOf([{ type: 'attribute', key: 'plan', operator: 'gt', value: 1 }])).toEqual([{ path: ['rules', 0, 'operator'], message: expect.stringContaining('select') }]);
    expect(issuesOf([{ type: 'attribute', key: 'born', operator: 'eq', value: 'x' }])).toHaveLength(1);
    expect(issuesOf([{ type: 'attribute', key: 'topics', operator: 'eq', value: 'a' }])).toHaveLength(1);
    expect(issuesOf([{ type: 'attribute', key: 'free', operator: 'after', value: '2024-01-01' }])).toEqual([
      { path: ['rules', 0, 'operator'], message: expect.stringContaining('date field') },
    ]);
  });

  it('values must suit the field: options, numbers, ordered ranges', () => {
    expect(issuesOf([{ type: 'attribute', key: 'plan', operator: 'in', value: ['pro', 'gold'] }])).toEqual([{ path: ['rules', 0, 'value'], message: expect.stringContaining('free, pro') }]);
    expect(issuesOf([{ type: 'attribute', key: 'score', operator: 'eq', value: '3' }])).toHaveLength(1);
    expect(issuesOf([{ type: 'attribute', key: 'score', operator: 'between', value: [5, 1] }])).toHaveLength(1);
    expect(issuesOf([{ type: 'attribute', key: 'born', operator: 'between', value: ['2024-02-01', '2024-01-01'] }])).toHaveLength(1);
    expect(issuesOf([{ type: 'attribute', key: 'free', operator: 'between', value: ['a', 'b'] }])).toHaveLength(1);
    expect(issuesOf([{ type: 'created', operator: 'between', value: ['2024-02-01', '2024-01-01'] }])).toHaveLength(1);
  });

  it('tags and lists must exist in the workspace; engagement conditions pass the checks', () => {
    const other = '33333333-3333-4333-8333-333333333333';
    expect(
      issuesOf([
        { type: 'tag', operator: 'has', tagId: TAG },
        { type: 'tag', operator: 'has', tagId: other },
        { type: 'list', operator: 'member', listId: other },
        { type: 'engagement', action: 'clicked', operator: 'at_least', count: 1 },
      ]).map((issue) => issue.path),
    ).toEqual([['rules', 1, 'tagId'], ['rules', 2, 'listId']]);
  });

  it('referenced tags and lists are collected from the whole tree', () => {
    const rules = parseAudienceRules({
      operator: 'or',
      rules: [{ type: 'tag', operator: 'has', tagId: TAG }, { type: 'group', operator: 'and', rules: [{ type: 'list', operator: 'member', listId: LIST }, { type: 'tag', operator: 'has_not', tagId: TAG }] }],
    }) as AudienceRules;
    expect(referencedIds(rules)).toEqual({ tagIds: [TAG], listIds: [LIST] });
  });
});
