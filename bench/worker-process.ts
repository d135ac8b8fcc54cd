import { type ChildProcess, spawn } from 'node:child_process';

export interface WorkerProcess {
  pid: number;
  stop: () => Promise<void>;
}

/**
 * The worker as `npm start` runs it: its own process (`workers/main.ts`, with the dispatchers), so the
 * benchmark's process (the API and the SMTP sink) does not share its event loop. It polls the task queues
 * of `env.TASK_QUEUE_PREFIX`. `BENCH_CPU_PROF=dir` writes its CPU profile there on exit.
 */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', 'tsx', 'workers/main.ts'], {
    env: { ...process.env, WORKER_METRICS_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (!child.pid) throw new Error('the worker did not start');
  return {
    pid: child.pid,
    stop: async () => {
      // SIGTERM lets the worker finish its running tasks and, when profiling, write its profile.
      process.kill(child.pid as number, 'SIGTERM');
      await exited;
    },
  };
}
