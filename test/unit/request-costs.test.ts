import { loadConfig } from '../../core/config';
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

describe('budget configuration', () => {
  it('a workspace budget smaller than a route\'s cost is refused at start: that route could never be called', () => {
    expect(() => loadConfig({ WORKSPACE_RATE_LIMIT_PER_SECOND: '10', RATE_COST_HEAVY: '20' })).toThrow(/WORKSPACE_RATE_LIMIT_PER_SECOND: must be at least/);
  });

  it('an audience statement timeout over half the audience pool\'s 30 s acquire timeout is refused', () => {
    expect(() => loadConfig({ AUDIENCE_STATEMENT_TIMEOUT_MS: '20000' })).toThrow(/AUDIENCE_STATEMENT_TIMEOUT_MS/);
  });

  it('the defaults: 100 points a second, 2 heavy slots, an audience pool of 2, 20 keys', () => {
    const config = loadConfig({});
    expect([config.WORKSPACE_RATE_LIMIT_PER_SECOND, config.WORKSPACE_HEAVY_CONCURRENCY, config.AUDIENCE_POOL_SIZE, config.MAX_API_KEYS_PER_WORKSPACE]).toEqual([100, 2, 2, 20]);
  });
});
