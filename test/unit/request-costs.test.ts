import { holdsHeavySlot, pointsFor, tighterOf, workspaceState } from '../../core/request-costs';

const costs = { search: 5, heavy: 20 };

describe('route costs', () => {
  it('a standard route costs one point, a search and heavy work their configured points', () => {
    expect([pointsFor('standard', costs), pointsFor('search', costs), pointsFor('heavy', costs)]).toEqual([1, 5, 20]);
  });

  it('only heavy work holds a slot', () => {
    expect([holdsHeavySlot('standard'), holdsHeavySlot('search'), holdsHeavySlot('heavy')]).toEqual([false, false, true]);
  });

  it("a workspace budget is told in requests of the route: 100 points allow 5 previews of 20, 45 left allow 2", () => {
    expect(workspaceState({ limit: 100, remaining: 45 }, 20, 1)).toEqual({ limit: 5, remaining: 2, resetSeconds: 1 });
    expect(workspaceState({ limit: 100, remaining: -3 }, 20, 1).remaining).toBe(0);
  });

  it('the headers tell the limit closer to refusing; the key on a tie', () => {
    const key = { limit: 10, remaining: 9, resetSeconds: 1 };
    expect(tighterOf(key, { limit: 5, remaining: 4, resetSeconds: 1 })).toEqual({ limit: 5, remaining: 4, resetSeconds: 1 });
    expect(tighterOf(key, { limit: 100, remaining: 99, resetSeconds: 1 })).toBe(key);
    expect(tighterOf(key, { limit: 9, remaining: 9, resetSeconds: 1 })).toBe(key);
  });
});
