import { VARIABLE_LIMITS, VariablesSchema, variablesProblem } from '../../core/variables';

/** `{ a: { a: ... 1 } }` with `levels` objects. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < levels; level += 1) value = { a: value };
  return value;
}

describe('template variable limits', () => {
  it('ordinary variables pass', () => {
    expect(variablesProblem({ first_name: 'Ann', order: { id: 7, items: [{ sku: 'A', qty: 2 }], paid: true }, note: null })).toBeNull();
    expect(variablesProblem({})).toBeNull();
  });

  it('ten levels pass, eleven are refused; arrays count as levels', () => {
    expect(variablesProblem(nested(VARIABLE_LIMITS.depth))).toBeNull();
    expect(variablesProblem(nested(VARIABLE_LIMITS.depth + 1))).toBe('Nested deeper than 10 levels');
    let arrays: unknown = 1;
    for (let level = 0; level < VARIABLE_LIMITS.depth; level += 1) arrays = [arrays];
    expect(variablesProblem({ list: arrays })).toBe('Nested deeper than 10 levels');
  });

  it('100,000 levels are refused without overflowing the stack', () => {
    expect(variablesProblem(nested(100_000))).toBe('Nested deeper than 10 levels');
  });

  it('1,000 keys and array items in all pass; one more is refused, wherever it is', () => {
    const flat = Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`k${index}`, index]));
    expect(variablesProblem(flat)).toBeNull();
    expect(variablesProblem({ ...flat, one: 'more' })).toBe('More than 1000 keys and array items in all');
    expect(variablesProblem({ items: Array.from({ length: 1_000 }, () => 0) })).toBe('More than 1000 keys and array items in all');
  });

  it('more than 64 KB as JSON is refused, counted in UTF-8 bytes', () => {
    expect(variablesProblem({ text: 'x'.repeat(60_000) })).toBeNull();
    expect(variablesProblem({ text: 'x'.repeat(66_000) })).toBe('Larger than 64 KB as JSON');
    expect(variablesProblem({ text: 'é'.repeat(33_000) })).toBe('Larger than 64 KB as JSON');
  });

  it('the schema reports the problem as a validation issue', () => {
    const parsed = VariablesSchema.safeParse(nested(10_000));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('Nested deeper than 10 levels');
    expect(VariablesSchema.safeParse({ name: 'Ann' }).success).toBe(true);
  });
});
