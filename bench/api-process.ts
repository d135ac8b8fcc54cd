import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../test/helpers/free-port';

export interface ApiProcess {
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

/**
 * The API as production runs it: its own process (`api/main.ts`), so the load generator in the benchmark's
 * process does not share its event loop. `BENCH_CPU_PROF=dir` writes the API's CPU profile there on exit.
 */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', 'tsx', 'api/main.ts'], {
    env: { ...process.env, ...env, PORT: String(port), MIGRATE_ON_START: 'false' },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/healthz`).then((res) => res.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error('the API did not answer /healthz in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid as number,
    stop: async () => {
      // SIGTERM lets the API drain and, when profiling, write its profile.
      if (child.pid) process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}
