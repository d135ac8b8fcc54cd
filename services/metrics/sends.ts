import { Counter, Histogram } from 'prom-client';
import { PermanentSendError, type ProviderEvent, ProviderUnavailableError } from '../../core/delivery';
import { messagingMetrics } from './registry';

/**
 * What became of sends, by provider and channel: `sent` when the provider took a message (the worker's
 * delivery activity), `failed` when the provider refused it for good, and what the provider told us later
 * (SES notifications and Twilio statuses in the API, SMTP refusals and bounce mail in the worker): delivered, bounced (hard),
 * soft_bounced, complained, delivery_delayed. Labels are closed sets, never ids (services/metrics/registry.ts).
 */
export type SendStatus = 'sent' | 'failed' | 'delivered' | 'bounced' | 'soft_bounced' | 'complained' | 'delivery_delayed';

const sends = new Counter({
  name: 'messaging_sends_total',
  help: 'Sends by status (sent, failed, delivered, bounced, soft_bounced, complained, delivery_delayed), provider and channel',
  labelNames: ['status', 'provider', 'channel'] as const,
  registers: [messagingMetrics],
});

/**
 * One provider call's duration, by its result: `ok`, `permanent` (refused for good), `transient` (try again:
 * throttling, greylisting) or `unavailable` (the provider itself down: counts against its breaker). Buckets
 * from 10 ms (a local SMTP relay) to 30 s (SES's own client timeout is near it).
 */
const providerCalls = new Histogram({
  name: 'messaging_provider_call_duration_seconds',
  help: 'Provider call duration by provider, channel and result (ok, permanent, transient, unavailable)',
  labelNames: ['provider', 'channel', 'result'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [messagingMetrics],
});

export function countSend(status: SendStatus, provider: string, channel: string, count = 1): void {
  sends.inc({ status, provider, channel }, count);
}

/** The status a recorded provider event counts as. */
export function statusOfEvent(event: ProviderEvent): SendStatus {
  switch (event.type) {
    case 'bounce':
      return event.bounceType === 'hard' ? 'bounced' : 'soft_bounced';
    case 'complaint':
      return 'complained';
    case 'delivered':
      return 'delivered';
    case 'delivery_delayed':
      return 'delivery_delayed';
  }
}

/** Counts a provider event once it was recorded (a redelivery or an event for someone else is not). */
export function countProviderEvent(provider: string, channel: string, event: ProviderEvent, outcome: string): void {
  if (outcome === 'recorded') countSend(statusOfEvent(event), provider, channel);
}

export type ProviderCallResult = 'ok' | 'permanent' | 'transient' | 'unavailable';

export function providerCallResult(error: unknown): ProviderCallResult {
  if (error instanceof PermanentSendError) return 'permanent';
  if (error instanceof ProviderUnavailableError) return 'unavailable';
  return 'transient';
}

/** Times one provider call and records its duration with its result; the call's answer or error passes through. */
export async function timedProviderCall<T>(provider: string, channel: string, call: () => Promise<T>): Promise<T> {
  const end = providerCalls.startTimer({ provider, channel });
  try {
    const result = await call();
    end({ result: 'ok' });
    return result;
  } catch (error) {
    end({ result: providerCallResult(error) });
    throw error;
  }
}
