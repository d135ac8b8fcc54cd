import type { Config } from './config';

/**
 * Recovery after a provider outage, as pure rules (docs/delivery.md "When a provider fails"): which route a
 * message's provider call takes, when a failed message is tried again, and when it is given up.
 */

/**
 * The provider route whose breaker a message's send counts against: the email provider is one route for
 * every workspace; WhatsApp (each workspace's own Twilio sender) and Telegram (each workspace's own bot)
 * are one route per workspace, so one workspace's revoked bot or Twilio outage holds back no one else.
 */
export function providerRoute(channel: string, provider: string, workspaceId: string): string {
  return channel === 'email' ? `email:${provider}` : `${channel}:${workspaceId}`;
}

/** The workspace a chat route belongs to, or null for a route that serves every workspace (email). */
export function routeWorkspace(route: string): string | null {
  return routeChannel(route) === 'email' ? null : route.slice(route.indexOf(':') + 1);
}

export function routeChannel(route: string): string {
  return route.slice(0, route.indexOf(':'));
}

/**
 * When a message that failed transiently is tried again, from the outbox (db/repositories/dispatch-queue.ts
 * computes the wait in the statement that hands many back at once): after its n-th failure
 * `min(maximumMs, initialMs × 2^(n-1))`, with ±20% jitter so messages that failed together (a greylisting
 * server's burst) do not come back together.
 */
export interface RetrySettings {
  initialMs: number;
  maximumMs: number;
  /** A message not sent this long after it was accepted ends failed. */
  deadlineMs: number;
}

/** Whether a message accepted at `createdAt` is past its retry deadline at `now`: then it ends failed. */
export function pastRetryDeadline(createdAt: Date, now: Date, settings: Pick<RetrySettings, 'deadlineMs'>): boolean {
  return now.getTime() - createdAt.getTime() >= settings.deadlineMs;
}

/**
 * The workflow id of a message's `round`-th dispatch (0 for the first): the first keeps the operators'
 * `<prefix>:<id>`; a message handed back to the outbox gets a new id each time, so its new dispatch never
 * collides with the first workflow while that one is still closing (REJECT_DUPLICATE would take the
 * collision for success and mark the message dispatched to a workflow that will not send it).
 */
export function dispatchWorkflowId(base: string, round: number): string {
  return round === 0 ? base : `${base}:${round + 1}`;
}

export function sendRetrySettings(config: Pick<Config, 'SEND_RETRY_INITIAL_MS' | 'SEND_RETRY_MAX_INTERVAL_MS' | 'SEND_RETRY_DEADLINE_MS'>): RetrySettings {
  return { initialMs: config.SEND_RETRY_INITIAL_MS, maximumMs: config.SEND_RETRY_MAX_INTERVAL_MS, deadlineMs: config.SEND_RETRY_DEADLINE_MS };
}

/**
 * The in-flight bound of a channel in the seconds after its route closed: from a tenth of the bound up to
 * all of it over `rampMs`. A provider just back gets no thundering herd, and on a busy worker the first
 * rounds stay small enough that every waiting workspace's first message (each gets a share of every round)
 * is not queued inside Temporal behind the whole bound: measured, a full first round of 150 starts put a
 * quiet workspace's one email 12.5 s after recovery on a loaded 2-core machine (docs/benchmarks.md).
 */
export function recoveryBound(bound: number, sinceClosedMs: number, rampMs: number): number {
  return Math.max(1, Math.ceil(bound * Math.min(1, 0.1 + (0.9 * sinceClosedMs) / rampMs)));
}
