import type { Response } from 'express';
import type { LimitState } from '../../core/request-costs';

/** The spec's headers, on every answer: the limit, what is left of it, and seconds until its window resets. */
export function tellLimit(res: Response, state: LimitState): void {
  res.setHeader('RateLimit-Limit', String(state.limit));
  res.setHeader('RateLimit-Remaining', String(state.remaining));
  res.setHeader('RateLimit-Reset', String(state.resetSeconds));
}
