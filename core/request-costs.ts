/**
 * What a route spends of its workspace's request budget, declared on each route line (api/http/route.ts):
 * `standard` (the default) is one point; a `search` (free text, filters over many rows) and `heavy` work
 * (audience queries, exports, imports, syncs, template renders) cost the configured points. Heavy work also
 * holds one of the workspace's slots of concurrent heavy work while it runs, so a flood of it waits its turn
 * in the workspace's own budget instead of in the database everyone shares.
 */
export const ROUTE_COSTS = ['standard', 'search', 'heavy'] as const;
export type RouteCost = (typeof ROUTE_COSTS)[number];

export interface CostPoints {
  search: number;
  heavy: number;
}

export function pointsFor(cost: RouteCost, points: CostPoints): number {
  return cost === 'standard' ? 1 : points[cost];
}

export function holdsHeavySlot(cost: RouteCost): boolean {
  return cost === 'heavy';
}

/** One limit's state as the rate-limit headers tell it: requests of this route allowed, left, and the seconds until the window resets. */
export interface LimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * A request passes two limits (its key's and its workspace's); the headers describe the one closest to
 * refusing, in requests of this route, so a client that paces by RateLimit-Remaining is never surprised
 * by the other. A workspace budget of `points` a second allows floor(points / cost) such requests.
 */
export function workspaceState(points: { limit: number; remaining: number }, cost: number, resetSeconds: number): LimitState {
  return { limit: Math.floor(points.limit / cost), remaining: Math.max(0, Math.floor(points.remaining / cost)), resetSeconds };
}

export function tighterOf(key: LimitState, workspace: LimitState): LimitState {
  return workspace.remaining < key.remaining ? workspace : key;
}
