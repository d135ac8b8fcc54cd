import { type Channel, CHANNELS } from './identities';
import type { MessageKind } from './dispatch';
import type { UsagePeriod } from './plans';

/**
 * What a quota unit is counted as in the usage report: the channel of the message and its kind, where mail
 * sent from an agent inbox (a transactional message to the outbox) counts as `inbox`, apart from the API's.
 */
export const USAGE_KINDS = ['transactional', 'campaign', 'automation', 'inbox'] as const;
export type UsageKind = MessageKind | 'inbox';

export interface UsageOf {
  channel: Channel;
  kind: UsageKind;
}

/** A row of `usage_daily`: the units reserved on one day for one channel and kind. */
export interface UsageDay extends UsageOf {
  day: string;
  messages: number;
}

export type ByChannel = Record<Channel, number>;
export type ByKind = Record<UsageKind, number>;

export interface DailyUsage {
  date: string;
  messages: number;
  byChannel: ByChannel;
}

export interface UsageBreakdown {
  byChannel: ByChannel;
  byKind: ByKind;
  daily: DailyUsage[];
}

const zeroChannels = (): ByChannel => Object.fromEntries(CHANNELS.map((channel) => [channel, 0])) as ByChannel;
const zeroKinds = (): ByKind => Object.fromEntries(USAGE_KINDS.map((kind) => [kind, 0])) as ByKind;

const DAY_MS = 86_400_000;

/** Every day of the period up to `until` (inclusive, UTC), as `YYYY-MM-DD`. */
export function daysOf(period: UsagePeriod, until: Date): string[] {
  const last = Math.min(period.end.getTime() - DAY_MS, Date.UTC(until.getUTCFullYear(), until.getUTCMonth(), until.getUTCDate()));
  const days: string[] = [];
  for (let at = period.start.getTime(); at <= last; at += DAY_MS) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/**
 * Folds the period's rows into totals by channel and kind and one entry per day of `days`, zeros included.
 * A channel or kind outside the known ones (none are written) still counts in the day's total.
 */
export function usageBreakdown(rows: readonly UsageDay[], days: readonly string[]): UsageBreakdown {
  const byChannel = zeroChannels();
  const byKind = zeroKinds();
  const daily = new Map(days.map((date) => [date, { date, messages: 0, byChannel: zeroChannels() }]));
  for (const row of rows) {
    if (row.channel in byChannel) byChannel[row.channel] += row.messages;
    if (row.kind in byKind) byKind[row.kind] += row.messages;
    const day = daily.get(row.day);
    if (!day) continue;
    day.messages += row.messages;
    if (row.channel in day.byChannel) day.byChannel[row.channel] += row.messages;
  }
  return { byChannel, byKind, daily: [...daily.values()] };
}

/** `YYYY-MM` → that calendar month in UTC. */
export function periodOfMonth(month: string): UsagePeriod {
  const [year, monthNumber] = month.split('-').map(Number);
  return { start: new Date(Date.UTC(year, monthNumber - 1, 1)), end: new Date(Date.UTC(year, monthNumber, 1)) };
}
