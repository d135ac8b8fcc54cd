/** The longest wait a journey may take in one node: a year. */
export const MAX_DURATION_MS = 366 * 24 * 60 * 60 * 1000;

// Weeks, days, hours, minutes and seconds only: years and months have no fixed length, and a journey
// wait is meant as elapsed time (an `until` or `atLocalTime` names a calendar moment instead).
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * A journey duration in milliseconds: an ISO 8601 duration (`P3D`, `PT12H`, `P1DT6H`, `P2W`) or a number
 * of seconds. Null when it is not one, is zero, or is longer than MAX_DURATION_MS.
 */
export function parseDuration(value: string | number): number | null {
  let ms: number;
  if (typeof value === 'number') {
    ms = value * 1000;
  } else {
    const parts = ISO_DURATION.exec(value);
    if (!parts || value === 'P' || value.endsWith('T')) return null;
    const [weeks, days, hours, minutes, seconds] = parts.slice(1).map((part) => Number(part ?? 0));
    ms = ((((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
  }
  if (!Number.isFinite(ms) || ms <= 0 || ms > MAX_DURATION_MS) return null;
  return Math.round(ms);
}
