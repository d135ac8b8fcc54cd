import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { bearerToken } from '../../core/api-keys';
import { AppError } from '../../core/errors';

/**
 * Who may see the service's internals: Prometheus metrics, and which dependency /readyz finds down and
 * why (host names, ports, driver messages). Operators send `Authorization: Bearer <OPS_TOKEN>`; anyone
 * else learns only whether the instance is ready.
 */
export interface OpsAccess {
  isOperator(req: Request): boolean;
  /**
   * `token`: OPS_TOKEN is set and required. `open`: no token in development or test (a local Prometheus,
   * curl). `off`: no token in production, so /metrics is not served at all.
   */
  metrics: 'token' | 'open' | 'off';
  /** Guards /metrics in `token` mode. */
  requireOperator: RequestHandler;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

export function createOpsAccess(token: string | undefined, production: boolean): OpsAccess {
  // Digests have one length whatever was sent, so the comparison takes the same time for every guess.
  const expected = token === undefined ? null : digest(token);
  const isOperator = (req: Request) => {
    const given = bearerToken(req.header('authorization'));
    return expected !== null && given !== null && timingSafeEqual(digest(given), expected);
  };
  return {
    isOperator,
    metrics: expected ? 'token' : production ? 'off' : 'open',
    requireOperator: (req, _res, next) => {
      if (!isOperator(req)) throw new AppError('unauthorized', 'Send the operator token: Authorization: Bearer <OPS_TOKEN>');
      next();
    },
  };
}
