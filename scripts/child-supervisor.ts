import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** The first restart waits this long; each quick death doubles it, up to the cap. */
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;
/** A child that ran this long before dying starts again from the first delay. */
const HEALTHY_AFTER_MS = 60_000;

/**
 * How long to wait before starting a child again after its `deaths`-th death in a row (1 for the first),
 * given how long it ran: a child that crashes at once backs off, one that ran a while restarts at once.
 */
export function restartDelayMs(deaths: number, ranForMs: number): number {
  if (ranForMs >= HEALTHY_AFTER_MS) return FIRST_DELAY_MS;
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, deaths - 1));
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * The dev stack's children (`npm start`): each runs with its output prefixed by its name, and one that dies
 * is started again with backoff while the others go on, as a restart policy would in production. Only
 * `stop()` ends them for good.
 */
export class ChildSupervisor {
  private readonly running = new Map<string, ChildProcess>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping = false;

  constructor(private readonly cwd: string) {}

  start(spec: ChildSpec, deaths = 0): void {
    if (this.stopping) return;
    const startedAt = Date.now();
    const child = spawn(spec.command, spec.args, { cwd: this.cwd, env: { ...process.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => console.log(`[${spec.name}] ${line}`));
    }
    // A command that cannot start (not found) reports here, then exits like any other death.
    child.on('error', (err) => console.error(`[start] ${spec.name}: ${err.message}`));
    child.on('exit', (code, signal) => {
      if (this.running.get(spec.name) === child) this.running.delete(spec.name);
      if (this.stopping) return;
      const ranForMs = Date.now() - startedAt;
      const streak = ranForMs >= HEALTHY_AFTER_MS ? 1 : deaths + 1;
      const delay = restartDelayMs(streak, ranForMs);
      console.error(`[start] ${spec.name} exited (${signal ?? code}); restarting it in ${delay / 1000} s, the rest keeps running`);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.start(spec, streak);
      }, delay);
      this.timers.add(timer);
    });
    this.running.set(spec.name, child);
  }

  /** SIGTERM to every child, SIGKILL to those still there after `graceMs`; no restarts from now on. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearTimeout(timer);
    const children = [...this.running.values()];
    const exits = children.map((child) => new Promise((done) => child.once('exit', done)));
    for (const child of children) child.kill('SIGTERM');
    await Promise.race([Promise.all(exits), new Promise((done) => setTimeout(done, graceMs))]);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
