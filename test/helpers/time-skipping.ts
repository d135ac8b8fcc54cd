import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { freePort } from './free-port';
import { resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { type InternalConnectionOptions, InternalConnectionOptionsSymbol } from '@temporalio/client/lib/connection';
import { msToTs } from '@temporalio/common/lib/time';
import { TimeSkippingWorkflowClient } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';

export interface TimeSkippingEnv {
  /** Waiting on a result through this client lets the test server skip time. */
  workflowClient: TimeSkippingWorkflowClient;
  nativeConnection: NativeConnection;
  taskQueue: string;
  /** Advances the test server's clock by `ms`, firing due timers on the way, in little wall time. */
  sleep: (ms: number) => Promise<void>;
  now: () => Promise<Date>;
  close: () => Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

async function connectWhenUp(address: string, server: ChildProcess): Promise<Connection> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  // The symbol makes the connection expose `testService`, as TestWorkflowEnvironment does internally.
  const options: InternalConnectionOptions = {
    address,
    connectTimeout: 1_000,
    [InternalConnectionOptionsSymbol]: { supportsTestService: true },
  };
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the Temporal test server exited with ${server.exitCode}`);
    try {
      return await Connection.connect(options);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

/**
 * Starts a Java time-skipping test server for one test file and connects to it. Skipped time is global
 * to a server, so files running in parallel each need their own. We start it ourselves rather than
 * through the SDK, which gives a spawned server only 5 s to answer: a cold JVM on two busy cores can miss
 * that (setup's class-data-sharing archive brings a start to about 0.4 s idle, 0.8 s busy).
 */
export async function startTimeSkipping(): Promise<TimeSkippingEnv> {
  const executable = process.env.TEMPORAL_TEST_SERVER_PATH ?? resolve(__dirname, '../../.tools/bin/temporal-test-server');
  const port = await freePort();
  const server = spawn(executable, [String(port)], { stdio: 'ignore' });
  const address = `127.0.0.1:${port}`;
  const connection = await connectWhenUp(address, server);
  const testService = connection.testService;
  if (!testService) throw new Error('the connection does not expose the test service');
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    workflowClient: new TimeSkippingWorkflowClient({ connection, namespace: 'default' }),
    nativeConnection,
    taskQueue: `test-${randomUUID()}`,
    sleep: async (ms) => {
      await testService.unlockTimeSkippingWithSleep({ duration: msToTs(ms) });
    },
    now: async () => {
      const { time } = await testService.getCurrentTime({});
      return new Date(Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6));
    },
    close: async () => {
      await nativeConnection.close();
      await connection.close();
      server.kill('SIGKILL');
    },
  };
}
