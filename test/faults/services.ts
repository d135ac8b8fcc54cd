import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { devServerArgs, temporalCliPath } from '../../scripts/temporal-cli';
import { FAULTS_DIR, killGroup, portAnswers, sleep, spawnGroup, type Supervised, waitFor } from './processes';

/**
 * The suite's own PostgreSQL, Redis and Temporal dev server, on ports of their own: never the shared ones
 * (55432, 56379, 7244) other tests run against. Each can be killed -9 and started again on the same data.
 */

const PG_BIN = readdirSync('/usr/lib/postgresql')
  .sort((a, b) => Number(a) - Number(b))
  .map((version) => `/usr/lib/postgresql/${version}/bin`)
  .pop() as string;
const PG_DATA = resolve(FAULTS_DIR, 'postgres');
const asRoot = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user (as scripts/services.sh does). */
function pgTool(tool: string, args: string[]): string {
  const command = asRoot ? 'runuser' : `${PG_BIN}/${tool}`;
  const full = asRoot ? ['-u', 'postgres', '--', `${PG_BIN}/${tool}`, ...args] : args;
  return execFileSync(command, full, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export class SuitePostgres {
  constructor(readonly port: number) {}

  get url(): string {
    return `postgres://messaging@127.0.0.1:${this.port}/messaging`;
  }

  /** A fresh cluster each run, so the figures of one run never mix with another's rows. */
  async init(): Promise<void> {
    rmSync(PG_DATA, { recursive: true, force: true });
    mkdirSync(PG_DATA, { recursive: true });
    if (asRoot) {
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
      chownSync(PG_DATA, id('-u'), id('-g'));
    }
    pgTool('initdb', ['-D', PG_DATA, '-U', 'messaging', '--auth=trust', '-E', 'UTF8']);
    await this.start();
    execFileSync('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'messaging', '-d', 'postgres', '-qc', 'CREATE DATABASE messaging']);
  }

  async start(): Promise<void> {
    // A postmaster killed -9 leaves backends that exit on their own within moments; until they are gone the
    // shared memory is still in use and a new postmaster refuses to start.
    for (let attempt = 1; ; attempt += 1) {
      try {
        // fsync off: the faults here kill processes, never the machine; the kernel keeps what was written.
        pgTool('pg_ctl', [
          '-D', PG_DATA, '-l', resolve(PG_DATA, 'server.log'), '-w', '-t', '60', 'start',
          '-o', `-c listen_addresses=127.0.0.1 -p ${this.port} -c unix_socket_directories='' -c fsync=off -c max_connections=200 -c shared_buffers=128MB`,
        ]);
        return;
      } catch (error) {
        if (attempt >= 20) throw error;
        await sleep(500);
      }
    }
  }

  postmasterPid(): number {
    return Number(readFileSync(resolve(PG_DATA, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** A crash: kill -9 of the postmaster alone (its backends notice and exit, as after a real crash). */
  async crash(): Promise<void> {
    const pid = this.postmasterPid();
    process.kill(pid, 'SIGKILL');
    await waitFor('the postmaster to die', () => !processAlive(pid), 10_000, 50);
    await waitFor('PostgreSQL to stop answering', async () => !(await portAnswers(this.port)), 10_000, 100);
  }

  stop(): void {
    if (existsSync(resolve(PG_DATA, 'postmaster.pid'))) {
      try {
        pgTool('pg_ctl', ['-D', PG_DATA, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already gone.
      }
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class SuiteRedis {
  private server: Supervised | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    this.server = spawnGroup('redis', 'redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {});
    await waitFor('Redis', () => portAnswers(this.port), 10_000, 50);
  }

  /** An outage: Redis gone at once, as a crash or a network cut looks to its clients. */
  async stop(): Promise<void> {
    if (this.server) await killGroup(this.server);
    this.server = null;
  }

  flushAll(): void {
    execFileSync('redis-cli', ['-p', String(this.port), 'FLUSHALL']);
  }

  /** Whether a key exists now (false while Redis is down). */
  has(key: string): boolean {
    try {
      return execFileSync('redis-cli', ['-p', String(this.port), 'EXISTS', key]).toString().trim() === '1';
    } catch {
      return false;
    }
  }
}

export class SuiteTemporal {
  private server: Supervised | null = null;
  constructor(readonly port: number) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Persisted in a file, so a kill -9 and a restart keep every workflow (as a real cluster would). */
  async start(): Promise<void> {
    const args = devServerArgs({ address: this.address, namespace: 'default', dbFile: resolve(FAULTS_DIR, 'temporal.db') });
    this.server = spawnGroup('temporal', temporalCliPath(process.env), args, {});
    await waitFor('the Temporal dev server', () => portAnswers(this.port), 120_000, 200);
  }

  async kill(): Promise<void> {
    if (this.server) await killGroup(this.server);
    this.server = null;
  }

  /** A fresh history for each run. */
  static clear(): void {
    for (const suffix of ['', '-shm', '-wal']) rmSync(resolve(FAULTS_DIR, `temporal.db${suffix}`), { force: true });
  }
}
