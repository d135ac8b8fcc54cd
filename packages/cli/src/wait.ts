import { InvalidArgumentError } from 'commander';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A flag's positive number (an interval, a timeout). */
export function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError(`expected a positive number, not "${value}"`);
  return number;
}

/** HH:MM:SS of a timestamp, in the terminal's local time: what a person following a stream reads. */
export function clock(at: string | Date): string {
  return new Date(at).toTimeString().slice(0, 8);
}
