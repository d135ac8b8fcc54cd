import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';

/** Everything the fault suite writes: data directories, logs, the registry of process groups, results. */
export const FAULTS_DIR = resolve(__dirname, '../../.data/faults');
export const LOG_DIR = resolve(FAULTS_DIR, 'logs');
/**
 * Process groups the suite started, one per line. scripts/test-faults.sh kills every group listed here when
 * it exits, so nothing outlives the run even when the runner itself is killed.
 */
export const PROCESS_GROUPS_FILE = resolve(FAULTS_DIR, 'process-groups');

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A child in its own process group, so a kill reaches whatever it spawned too (tsx, the Temporal CLI's server). */
export interface Supervised {
  readonly name: string;
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
  /** Set by whoever killed it on purpose; any other exit is unexpected. */
  killedOnPurpose: boolean;
  alive: () => boolean;
}

export function spawnGroup(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  onLine?: (line: string) => void,
): Supervised {
  mkdirSync(LOG_DIR, { recursive: true });
  const log = createWriteStream(resolve(LOG_DIR, `${name}.log`), { flags: 'a' });
  log.write(`--- started ${new Date().toISOString()} ---\n`);
  const child = spawn(command, args, {
    cwd: resolve(__dirname, '../..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  appendFileSync(PROCESS_GROUPS_FILE, `${child.pid}\n`);
  let pending = '';
  const feed = (chunk: Buffer) => {
    log.write(chunk);
    if (!onLine) return;
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  };
  child.stdout?.on('data', feed);
  child.stderr?.on('data', feed);
  let running = true;
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      running = false;
      log.end(`--- exited ${signal ?? code} ${new Date().toISOString()} ---\n`);
      done();
    }),
  );
  return { name, process: child, exited, killedOnPurpose: false, alive: () => running };
}

/** kill -9 of the whole group; resolves once the group is gone (a group member may linger a moment). */
export async function killGroup(target: Supervised, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  target.killedOnPurpose = true;
  const pgid = target.process.pid as number;
  try {
    process.kill(-pgid, signal);
  } catch {
    return;
  }
  await Promise.race([target.exited, sleep(30_000)]);
  for (let attempt = 0; attempt < 300; attempt += 1) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    if (attempt === 100) process.kill(-pgid, 'SIGKILL');
    await sleep(100);
  }
  throw new Error(`${target.name}: process group ${pgid} is still alive`);
}

export function portAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

/** Polls until `check` holds; throws with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
