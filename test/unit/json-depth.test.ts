import { nestedDeeperThan } from '../../core/json-depth';

describe('JSON nesting depth', () => {
  it('scalars have no depth; an object or array is one level, each nested one another', () => {
    expect(nestedDeeperThan('text', 0)).toBe(false);
    expect(nestedDeeperThan({}, 1)).toBe(false);
    expect(nestedDeeperThan({}, 0)).toBe(true);
    expect(nestedDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [{ b: [] }] }, 3)).toBe(true);
  });

  it('the deepest branch counts, wherever it is', () => {
    expect(nestedDeeperThan({ shallow: 1, list: [1, 2, { deep: { deeper: {} } }] }, 4)).toBe(true);
    expect(nestedDeeperThan({ shallow: 1, list: [1, 2, { deep: { deeper: {} } }] }, 5)).toBe(false);
  });

  it('100,000 levels are measured without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(nestedDeeperThan(deep, 32)).toBe(true);
  });
});
