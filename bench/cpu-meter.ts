import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds used so far, split by who used them. */
export interface CpuReading {
  /** This benchmark process (API, SMTP sink and, unless it has its own process, the worker). */
  self: number;
  /** Every process whose command line matches a group's pattern (or the one process of a group's pid), summed. */
  groups: Record<string, number>;
  /** The whole machine, every core, from /proc/stat. */
  machine: number;
  /** Time the machine's cores sat idle waiting for the disk, from /proc/stat. */
  iowait: number;
}

const TICKS_PER_SECOND = 100;

function processCpu(pid: string): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0; // the process ended between listing and reading
  }
}

/** A process's command line, its arguments joined by spaces ('' once it has ended). */
export function commandLine(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * Reads CPU time from /proc. A rate on this two-core machine moves with whatever else runs; the CPU a
 * process spends per message does not, so the benchmarks print both. A process that exits between two
 * readings takes its time with it: groups suit long-lived processes (PostgreSQL backends of a pool, the
 * Temporal server, a worker).
 */
export function readCpu(groups: Record<string, RegExp | number>): CpuReading {
  const usage = process.cpuUsage();
  const sums: Record<string, number> = Object.fromEntries(Object.keys(groups).map((name) => [name, 0]));
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const command = commandLine(pid);
    for (const [name, pattern] of Object.entries(groups)) if (typeof pattern === 'number' ? pattern === Number(pid) : pattern.test(command)) sums[name] += processCpu(pid);
  }
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
  const busy = ticks.slice(0, 8).reduce((sum, value, index) => (index === 3 || index === 4 ? sum : sum + value), 0);
  return { self: (usage.user + usage.system) / 1e6, groups: sums, machine: busy / TICKS_PER_SECOND, iowait: ticks[4] / TICKS_PER_SECOND };
}

/** "self 1.2 s, postgres 0.8 s, …" per 1,000 units of work between two readings. */
export function cpuPerThousand(before: CpuReading, after: CpuReading, units: number): string {
  const per = (seconds: number) => `${((seconds / units) * 1000).toFixed(2)} s`;
  const parts = [`bench process ${per(after.self - before.self)}`];
  for (const name of Object.keys(after.groups)) parts.push(`${name} ${per(after.groups[name] - (before.groups[name] ?? 0))}`);
  parts.push(`machine ${per(after.machine - before.machine)}`);
  return `CPU per 1,000: ${parts.join(', ')}`;
}
