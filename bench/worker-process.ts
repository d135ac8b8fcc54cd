import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { EmailStack } from '../test/helpers/email-stack';

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
    env: { ...process.env, WORKER_METRICS_PORT: '0', LOG_LEVEL: process.env.BENCH_WORKER_LOG_LEVEL ?? 'warn', ...env },
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

/** Resident memory of a process, from /proc (0 once it has exited). */
export function residentBytes(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Moves a test stack's worker and dispatchers into their own process, as `npm start` runs them, and waits
 * until that process polls (bundling the workflow code takes the new process seconds of CPU: measure only after).
 */
export async function workerInItsOwnProcess(client: Client, stack: EmailStack, overrides: Record<string, string>): Promise<WorkerProcess> {
  await stack.stopDispatcher();
  await stack.stopWorkers();
  const { config } = stack.api;
  const worker = await startWorkerProcess({
    ...overrides,
    DATABASE_URL: config.DATABASE_URL,
    TASK_QUEUE_PREFIX: config.TASK_QUEUE_PREFIX,
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: stack.sink.url,
  });
  const taskQueue = { name: `${config.TASK_QUEUE_PREFIX}default` };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const described = await client.workflowService.describeTaskQueue({
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    // Only the new process's own poller counts: the server lists recent pollers for minutes, the stack's
    // stopped in-process workers among them (the SDK's default identity is `<pid>@<host>`).
    if (described.pollers?.some((poller) => poller.identity?.startsWith(`${worker.pid}@`))) return worker;
  }
  await worker.stop();
  throw new Error('the worker process did not poll its task queue within 60 s');
}
