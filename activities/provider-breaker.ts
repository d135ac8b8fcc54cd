import type { Sequelize } from 'sequelize';
import { type BreakerState, findBreaker, recordBreakerFailure, recordBreakerSuccess } from '../db/repositories/provider-breakers';
import type { SendObserver } from './send-observer';

export interface ProviderBreakerDeps {
  db: Sequelize;
  observer: SendObserver;
  /** Consecutive provider-level failures that open a route. */
  threshold: number;
  /** How long this process trusts what it last read of a route (other workers may have moved it). */
  cacheMs?: number;
}

/**
 * The send path's side of the provider breakers (db/repositories/provider-breakers.ts): each worker keeps
 * what it last read of a route for a second, so the hot path reads a route at most once a second and writes
 * only on failures and on the success that follows them.
 */
export function createProviderBreaker(deps: ProviderBreakerDeps) {
  const cacheMs = deps.cacheMs ?? 1_000;
  const cache = new Map<string, { state: BreakerState; readAt: number }>();

  async function stateOf(route: string): Promise<BreakerState> {
    const cached = cache.get(route);
    if (cached && Date.now() - cached.readAt < cacheMs) return cached.state;
    const state = await findBreaker(deps.db, route);
    cache.set(route, { state, readAt: Date.now() });
    return state;
  }

  return {
    /**
     * Whether an attempt should hand its message back without calling the provider: the route opened
     * after the message was dispatched (it was in flight when the outage began). A probe, dispatched while
     * the route was open, goes through.
     */
    async standsDown(route: string, dispatchedAt: Date | null): Promise<boolean> {
      const state = await stateOf(route);
      return state.open && state.openedAt !== null && dispatchedAt !== null && dispatchedAt < state.openedAt;
    },

    async failed(route: string, error: unknown): Promise<void> {
      const reason = error instanceof Error ? error.message : String(error);
      const state = await recordBreakerFailure(deps.db, route, deps.threshold, reason);
      cache.set(route, { state, readAt: Date.now() });
      if (state.opened) deps.observer.breakerChanged(route, true, reason);
    },

    async succeeded(route: string): Promise<void> {
      const cached = cache.get(route)?.state;
      if (cached && !cached.open && cached.failures === 0) return;
      if (await recordBreakerSuccess(deps.db, route)) deps.observer.breakerChanged(route, false, 'a send succeeded');
      cache.set(route, { state: { route, open: false, failures: 0, openedAt: null }, readAt: Date.now() });
    },
  };
}

export type ProviderBreaker = ReturnType<typeof createProviderBreaker>;
