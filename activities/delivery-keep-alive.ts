import { Context } from '@temporalio/activity';

/** What the keep-alive needs of the delivery timing (activities/delivery.ts). */
export interface KeepAliveTiming {
  /** How long a delivery claim holds without renewal. */
  claimLeaseMs: number;
  /** How often a live attempt heartbeats to Temporal and renews its claims. */
  keepAliveMs: number;
}

/**
 * Heartbeats every `keepAliveMs` from the start of an attempt until its end (well inside the heartbeat
 * timeout; no heartbeat at the very start, which would cost Temporal a write for every message sent
 * within the first interval), and renews the delivery claims the attempt
 * holds, so neither Temporal nor a second attempt takes a slow but live attempt for dead. A batch holds
 * several claims at once; `progress` goes with each heartbeat.
 */
export function keepAlive(timing: KeepAliveTiming, renew: (claims: Array<{ messageId: string; claim: string }>) => Promise<unknown>) {
  const context = Context.current();
  const claims = new Map<string, string>();
  let progress: unknown;
  let lastRenewal = Date.now();
  const timer = setInterval(() => {
    context.heartbeat(progress);
    if (claims.size && Date.now() - lastRenewal >= timing.claimLeaseMs / 3) {
      lastRenewal = Date.now();
      // A failed renewal is not fatal: the lease still covers two more tries.
      renew([...claims].map(([messageId, claim]) => ({ messageId, claim }))).catch(() => undefined);
    }
  }, timing.keepAliveMs);
  return {
    hold(messageId: string, claim: string) {
      claims.set(messageId, claim);
    },
    release(messageId: string) {
      claims.delete(messageId);
    },
    report(value: unknown) {
      progress = value;
    },
    stop: () => clearInterval(timer),
  };
}

export type KeepAlive = ReturnType<typeof keepAlive>;
