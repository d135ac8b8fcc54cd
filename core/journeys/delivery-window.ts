import type { Channel } from '../identities';
import { isTimeZone, localMinutes, minutesOf, nextLocalTime } from './local-time';

/**
 * When a journey message may go out: a workspace's quiet hours (in the contact's time zone) and its
 * frequency caps (per contact, per channel, per window). A message that would break either waits for the
 * next allowed moment instead of being dropped. Transactional sends are exempt: they never come here.
 */

export interface QuietHours {
  /** Local HH:MM when quiet hours begin; they may run past midnight (21:00 to 08:00). */
  start: string;
  end: string;
}

export interface FrequencyCap {
  /** The channel counted, or `any` for all channels together. */
  channel: Channel | 'any';
  /** At most this many marketing messages (campaign and journey) per contact within the window. */
  limit: number;
  windowMs: number;
}

export interface JourneySettings {
  /** The workspace's zone, for contacts without a valid one of their own. */
  timezone: string;
  /** The contact attribute holding an IANA zone (`Europe/Paris`). */
  timezoneAttribute: string;
  quietHours: QuietHours | null;
  frequencyCaps: FrequencyCap[];
}

export const DEFAULT_JOURNEY_SETTINGS: JourneySettings = { timezone: 'UTC', timezoneAttribute: 'timezone', quietHours: null, frequencyCaps: [] };

/** The contact's zone from its attribute when the runtime knows it, else the workspace's. */
export function contactTimeZone(settings: JourneySettings, attributes: Record<string, unknown>): string {
  const own = attributes[settings.timezoneAttribute];
  return isTimeZone(own) ? own : settings.timezone;
}

/** Whether `at` falls inside quiet hours; the end is not quiet (a 08:00 end sends at 08:00). */
export function inQuietHours(at: Date, timeZone: string, quiet: QuietHours): boolean {
  const now = localMinutes(at, timeZone);
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return false;
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/** A message sent to the contact, as the caps count it. */
export interface RecentSend {
  channel: Channel;
  at: Date;
}

/**
 * When the caps let one more message on `channel` go: null when they do now; otherwise the moment the
 * oldest counted send of the tightest cap leaves its window.
 */
export function capRelease(now: Date, channel: Channel, caps: readonly FrequencyCap[], recent: readonly RecentSend[]): Date | null {
  let release: number | null = null;
  for (const cap of caps) {
    if (cap.channel !== 'any' && cap.channel !== channel) continue;
    // A cap of zero would hold every message forever: no moment frees it, so it holds nothing back.
    if (cap.limit < 1) continue;
    const since = now.getTime() - cap.windowMs;
    const counted = recent
      .filter((send) => (cap.channel === 'any' || send.channel === cap.channel) && send.at.getTime() > since)
      .map((send) => send.at.getTime())
      .sort((a, b) => a - b);
    if (counted.length < cap.limit) continue;
    // The window must drop enough sends to leave room for one: the (count - limit + 1)th oldest.
    const freeAt = counted[counted.length - cap.limit] + cap.windowMs;
    release = release === null ? freeAt : Math.max(release, freeAt);
  }
  return release === null ? null : new Date(release);
}

export type DeferReason = 'quiet_hours' | 'frequency_cap';

/**
 * The first moment at or after `now` when the message may go, with the rule that held it back; null when
 * it may go now. Quiet hours and caps are applied in turn until neither moves the moment (a cap released
 * during quiet hours waits for their end).
 */
export function nextAllowedMoment(
  now: Date,
  channel: Channel,
  settings: JourneySettings,
  timeZone: string,
  recent: readonly RecentSend[],
): { at: Date; reason: DeferReason } | null {
  let at = now;
  let reason: DeferReason | null = null;
  for (let round = 0; round < 10; round += 1) {
    let moved = false;
    if (settings.quietHours && inQuietHours(at, timeZone, settings.quietHours)) {
      at = nextLocalTime(at, timeZone, settings.quietHours.end);
      reason ??= 'quiet_hours';
      moved = true;
    }
    const released = capRelease(at, channel, settings.frequencyCaps, recent);
    if (released && released.getTime() > at.getTime()) {
      at = released;
      reason ??= 'frequency_cap';
      moved = true;
    }
    if (!moved) break;
  }
  return reason === null ? null : { at, reason };
}
