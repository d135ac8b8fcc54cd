import { parseAudienceRules } from '../../core/audience-rules';
import { type FieldDefinition, fieldsByKey } from '../../core/custom-fields';
import { BindParams } from '../../db/bind-params';
import { audienceCondition, soleMembershipCount } from '../../db/segment-query';

const fields = fieldsByKey([
  { key: 'born', type: 'date', options: null, archived: false, isSystem: false },
  { key: 'topics', type: 'multiselect', options: ['a', 'b'], archived: false, isSystem: false },
] satisfies FieldDefinition[]);
const now = new Date('2026-06-01T00:00:00.000Z');

function compile(rules: unknown[], operator: 'and' | 'or' = 'and') {
  const params = new BindParams();
  const workspace = params.add('ws', 'uuid');
  const sql = audienceCondition(parseAudienceRules({ operator, rules }), { fields, now }, params, workspace);
  return { sql, values: params.values };
}

describe('compiling rules to SQL', () => {
  it('values, keys and names travel only as parameters, never in the SQL text', () => {
    const hostile = "x'); DROP TABLE contacts; --";
    const { sql, values } = compile([
      { type: 'attribute', key: hostile, operator: 'eq', value: hostile },
      { type: 'attribute', key: hostile, operator: 'contains', value: hostile },
      { type: 'event', name: hostile, operator: 'at_least', count: 2, properties: { [hostile]: hostile } },
    ]);
    expect(sql).not.toContain('DROP');
    expect(values.some((value) => String(value).includes('DROP TABLE'))).toBe(true);
  });

  it('a tree is one condition: groups become parenthesised AND/OR, an empty group is TRUE or FALSE', () => {
    const { sql } = compile([
      { type: 'tag', operator: 'has', tagId: '11111111-1111-4111-8111-111111111111' },
      { type: 'group', operator: 'or', rules: [{ type: 'list', operator: 'not_member', listId: '22222222-2222-4222-8222-222222222222' }, { type: 'created', operator: 'within_last', days: 7 }] },
    ]);
    expect(sql).toBe(
      '(EXISTS (SELECT 1 FROM contact_tags t WHERE t.tag_id = $2::uuid AND t.contact_id = c.id) AND ' +
        '(NOT EXISTS (SELECT 1 FROM list_members m WHERE m.list_id = $3::uuid AND m.contact_id = c.id) OR c.created_at >= $4::timestamptz))',
    );
    expect(compile([]).sql).toBe('TRUE');
    expect(compile([], 'or').sql).toBe('FALSE');
  });

  it('equality is jsonb containment, which the GIN index on attributes serves', () => {
    const { sql, values } = compile([{ type: 'attribute', key: 'plan', operator: 'eq', value: 'pro' }]);
    expect(sql).toBe('(c.attributes @> $2::jsonb)');
    expect(values[1]).toBe('{"plan":"pro"}');
  });

  it('negations are exact complements: null-safe for comparisons that can be unknown', () => {
    expect(compile([{ type: 'attribute', key: 'n', operator: 'not_contains', value: 'x' }]).sql).toContain(') IS NOT TRUE');
    expect(compile([{ type: 'attribute', key: 'n', operator: 'not_in', value: ['x'] }]).sql).toContain(') IS NOT TRUE');
  });

  it('dates compare their canonical strings byte by byte, within_last counted back from now', () => {
    const { sql, values } = compile([{ type: 'attribute', key: 'born', operator: 'within_last', days: 10 }]);
    expect(sql).toContain('COLLATE "C" >=');
    expect(values.slice(1)).toEqual(['born', '2026-05-22T00:00:00.000Z', '2026-06-01T00:00:00.000Z']);
  });

  it('a multiselect contains an option by containment, and in means any of', () => {
    expect(compile([{ type: 'attribute', key: 'topics', operator: 'contains', value: 'a' }]).values[1]).toBe('{"topics":["a"]}');
    expect(compile([{ type: 'attribute', key: 'topics', operator: 'in', value: ['a', 'b'] }]).sql).toContain('?|');
  });

  it('once and never are plain EXISTS; other counts group the window\'s events first', () => {
    expect(compile([{ type: 'event', name: 'e', operator: 'at_least', count: 1 }]).sql).not.toContain('GROUP BY');
    expect(compile([{ type: 'event', name: 'e', operator: 'at_most', count: 0 }]).sql).toMatch(/^\(NOT EXISTS/);
    const { sql } = compile([{ type: 'event', name: 'e', operator: 'at_most', count: 3, withinDays: 30 }]);
    expect(sql).toContain('GROUP BY e.contact_id HAVING count(*) > $');
    expect(sql).toMatch(/^\(NOT EXISTS/);
  });

  it('a tree that is one positive tag or list condition is counted from the membership index alone', () => {
    const tag = { type: 'tag', operator: 'has', tagId: '11111111-1111-4111-8111-111111111111' };
    const sole = (rules: unknown[]) => soleMembershipCount(parseAudienceRules({ operator: 'and', rules }), new BindParams());
    expect(sole([tag])).toBe('SELECT count(*) AS count FROM contact_tags WHERE tag_id = $1::uuid');
    expect(sole([{ type: 'group', operator: 'or', rules: [{ type: 'list', operator: 'member', listId: '22222222-2222-4222-8222-222222222222' }] }])).toContain('FROM list_members');
    expect(sole([{ ...tag, operator: 'has_not' }])).toBeNull();
    expect(sole([tag, tag])).toBeNull();
    expect(sole([{ type: 'created', operator: 'within_last', days: 1 }])).toBeNull();
  });
});
