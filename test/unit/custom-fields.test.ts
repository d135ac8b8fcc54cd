import { canonicalDate, type FieldDefinition, fieldsByKey, fieldValue, SYSTEM_FIELDS } from '../../core/custom-fields';

const field = (type: FieldDefinition['type'], options: string[] | null = null): FieldDefinition => ({
  key: 'k',
  type,
  options,
  archived: false,
  isSystem: false,
});

describe('custom field values', () => {
  it('dates are stored as UTC ISO date-times; a plain date means midnight UTC', () => {
    expect(canonicalDate('2024-05-01')).toBe('2024-05-01T00:00:00.000Z');
    expect(canonicalDate('2024-05-01T10:30+02:00')).toBe('2024-05-01T08:30:00.000Z');
    expect(canonicalDate('2024-05-01T10:30:15.5Z')).toBe('2024-05-01T10:30:15.500Z');
  });

  it.each(['2023-02-30', '2024-13-01', '01/05/2024', '2024-05-01T10:30', 'yesterday', '9999-12-31T23:00:00-05:00'])(
    '%s is not a date',
    (input) => {
      expect(canonicalDate(input)).toBeNull();
    },
  );

  it('each type takes exactly its JSON type; nothing is coerced', () => {
    expect(fieldValue(field('number'), 12.5)).toEqual({ ok: true, value: 12.5 });
    expect(fieldValue(field('number'), '12').ok).toBe(false);
    expect(fieldValue(field('number'), Number.NaN).ok).toBe(false);
    expect(fieldValue(field('boolean'), false)).toEqual({ ok: true, value: false });
    expect(fieldValue(field('boolean'), 'true').ok).toBe(false);
    expect(fieldValue(field('text'), 'x')).toEqual({ ok: true, value: 'x' });
    expect(fieldValue(field('text'), 1).ok).toBe(false);
    expect(fieldValue(field('text'), 'x'.repeat(5_001)).ok).toBe(false);
    expect(fieldValue(field('date'), '2024-05-01')).toEqual({ ok: true, value: '2024-05-01T00:00:00.000Z' });
  });

  it('select and multiselect take only their options; a multiselect drops repeats and keeps order', () => {
    expect(fieldValue(field('select', ['a', 'b']), 'b')).toEqual({ ok: true, value: 'b' });
    expect(fieldValue(field('select', ['a', 'b']), 'A').ok).toBe(false);
    expect(fieldValue(field('multiselect', ['a', 'b']), ['b', 'a', 'b'])).toEqual({ ok: true, value: ['b', 'a'] });
    expect(fieldValue(field('multiselect', ['a', 'b']), ['c']).ok).toBe(false);
    expect(fieldValue(field('multiselect', ['a', 'b']), 'a').ok).toBe(false);
  });

  it('system fields come first and a workspace field of another key joins them', () => {
    const byKey = fieldsByKey([{ ...field('number'), key: 'score' }]);
    expect([...byKey.keys()]).toEqual([...SYSTEM_FIELDS.map((system) => system.key), 'score']);
  });
});
