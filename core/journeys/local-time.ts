/**
 * Wall-clock time in a contact's time zone, with the runtime's own IANA database (Intl): what quiet hours
 * and `atLocalTime` waits are written in. No library: Intl answers the one question asked here (a zone's
 * offset at a moment), and daylight-saving gaps are settled by the rule below.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** Whether the runtime knows the zone (`Europe/Paris`, `UTC`). */
export function isTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  try {
    formatter(value);
    return true;
  } catch {
    return false;
  }
}

const HALF_DAY_MS = 12 * 60 * 60 * 1000;

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

function wallClockAt(at: Date, timeZone: string): WallClock & { second: number } {
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(at).map((part) => [part.type, part.value]));
  return { year: +parts.year, month: +parts.month, day: +parts.day, hour: +parts.hour, minute: +parts.minute, second: +parts.second };
}

/** The zone's offset from UTC at a moment, in milliseconds. */
function offsetAt(at: Date, timeZone: string): number {
  const wall = wallClockAt(at, timeZone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

/**
 * The moment a wall-clock time happens in the zone. The zone's offsets half a day before and after the
 * naive moment are the only ones that can apply (no zone changes its offset twice within a day); a
 * candidate is right when the zone's clock shows the wanted time at it. A time repeated by a fall-back
 * jump has two right candidates: the later is taken. A time skipped by a spring-forward jump has none: it
 * comes out the same distance after the jump (02:30 on that night is 03:30), east or west of Greenwich.
 */
export function zonedMoment(wall: WallClock, timeZone: string): Date {
  const naive = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  const before = offsetAt(new Date(naive - HALF_DAY_MS), timeZone);
  const after = offsetAt(new Date(naive + HALF_DAY_MS), timeZone);
  const right = [naive - before, naive - after].filter((candidate) => offsetAt(new Date(candidate), timeZone) === naive - candidate);
  // In a gap, the offset in force before the jump carries the wall time past it by the jump's length.
  return new Date(right.length > 0 ? Math.max(...right) : naive - before);
}

/** Minutes since local midnight of `HH:MM`. */
export function minutesOf(hhmm: string): number {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return hours * 60 + minutes;
}

/** The next moment at or after `now` when the zone's clock shows `hhmm`. */
export function nextLocalTime(now: Date, timeZone: string, hhmm: string): Date {
  const wall = wallClockAt(now, timeZone);
  const target = minutesOf(hhmm);
  for (let dayOffset = 0; dayOffset <= 2; dayOffset += 1) {
    const day = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + dayOffset));
    const at = zonedMoment(
      { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate(), hour: Math.floor(target / 60), minute: target % 60 },
      timeZone,
    );
    if (at.getTime() >= now.getTime()) return at;
  }
  throw new Error(`No ${hhmm} in ${timeZone} within two days of ${now.toISOString()}`);
}

/** Minutes since local midnight at a moment in the zone. */
export function localMinutes(at: Date, timeZone: string): number {
  const wall = wallClockAt(at, timeZone);
  return wall.hour * 60 + wall.minute;
}
