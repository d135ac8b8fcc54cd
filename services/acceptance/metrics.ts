import { Counter } from 'prom-client';
import { AppError, type ErrorCode } from '../../core/errors';
import { messagingMetrics } from '../metrics/registry';
import type { SendOutcome } from './outcome';

/** Who asked for the message: the API's sends, a campaign's pages, a journey's message nodes, an inbox's replies. */
export type AcceptanceKind = 'transactional' | 'campaign' | 'journey' | 'inbox';

/**
 * Every message the acceptance answers, by channel, kind and outcome; a refusal carries its error code
 * (a closed list, core/errors.ts), so "quota_exceeded is climbing" is one query. No workspace label: see
 * services/metrics/registry.ts.
 */
const accepted = new Counter({
  name: 'messaging_messages_accepted_total',
  help: 'Messages answered by the acceptance, by channel, kind (transactional, campaign, journey, inbox) and outcome (accepted, duplicate, refused with its error code)',
  labelNames: ['channel', 'kind', 'outcome', 'code'] as const,
  registers: [messagingMetrics],
});

/** Counts the outcomes of one call: accepted and duplicate as they are, a failure by its code. */
export function countOutcomes(channel: string, kind: AcceptanceKind, outcomes: readonly SendOutcome[]): void {
  for (const outcome of outcomes) {
    if (outcome.status === 'failed') accepted.inc({ channel, kind, outcome: 'refused', code: outcome.error.code });
    else accepted.inc({ channel, kind, outcome: outcome.status, code: '' });
  }
}

/** Counts `count` messages accepted at once (a campaign's page). */
export function countAccepted(channel: string, kind: AcceptanceKind, count: number): void {
  if (count > 0) accepted.inc({ channel, kind, outcome: 'accepted', code: '' }, count);
}

/** Counts one message refused with `code` (a journey's message over its workspace's quota). */
export function countRefused(channel: string, kind: AcceptanceKind, code: ErrorCode): void {
  accepted.inc({ channel, kind, outcome: 'refused', code });
}

/**
 * Counts a refusal thrown by an acceptance that answers one send by throwing (chat, inbox mail). Anything
 * that is not an AppError is a fault, not a refusal: the HTTP edge answers it 500 and the API's
 * http_request_duration_seconds counts it.
 */
export function countThrown(channel: string, kind: AcceptanceKind, error: unknown): void {
  if (error instanceof AppError) accepted.inc({ channel, kind, outcome: 'refused', code: error.code });
}

/** Runs a single send's acceptance and counts what it answered, thrown refusals included. */
export async function counted<T extends SendOutcome | { status: string }>(channel: string, kind: AcceptanceKind, accept: () => Promise<T>): Promise<T> {
  try {
    const outcome = await accept();
    if (outcome.status === 'failed' && 'error' in outcome && outcome.error instanceof AppError) accepted.inc({ channel, kind, outcome: 'refused', code: outcome.error.code });
    else accepted.inc({ channel, kind, outcome: outcome.status === 'duplicate' ? 'duplicate' : 'accepted', code: '' });
    return outcome;
  } catch (error) {
    countThrown(channel, kind, error);
    throw error;
  }
}
