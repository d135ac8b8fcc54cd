import { appendFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { DefaultLogger, type Logger, type LogLevel, type LogMetadata, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

/**
 * Messages the SDK logs as warnings in a passing run that nothing can act on, each matched exactly:
 * - an activity-only worker (the `sends` and `bulk` queues' workers, by design: workers/create-worker.ts) is told
 *   it has no workflows; that is its configuration, not a fault;
 * - the Java time-skipping test server (test/helpers/time-skipping.ts) reports a version older than 1.16 to the
 *   core, which then warns, once per worker, that heartbeat details may be lost when an activity fails. That is
 *   the test server's protocol version (the latest release still reports it), not the dev server or a
 *   cluster's, where the warning would matter and still shows.
 */
function nothingToActOn(message: string): boolean {
  return (
    message === 'No workflows registered, not polling for workflow tasks' ||
    message.startsWith('Temporal Server 1.16.0 or newer is required to guarantee that the latest heartbeat details are preserved')
  );
}

/**
 * Worker state changes are logged at INFO; in tests only warnings and errors help, less the ones above. Most
 * warnings of a passing run are failures the tests cause on purpose (an activity that throws, a workflow that
 * fails: about 180 lines a run), which nobody acts on in a passing run and which a reader of a failing test needs:
 * they go to the run's Temporal log (TEST_TEMPORAL_LOG, .data/logs/temporal-test.log, emptied by
 * test/jest-global-setup.ts), not to the test output. Errors still reach the output.
 */
class TestLogger implements Logger {
  private readonly output = new DefaultLogger('WARN');

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (nothingToActOn(message) || level === 'TRACE' || level === 'DEBUG' || level === 'INFO') return;
    const file = process.env.TEST_TEMPORAL_LOG;
    if (level === 'ERROR' || !file) this.output.log(level, message, meta);
    else appendFileSync(file, `${new Date().toISOString()} [${level}] ${message} ${inspect(meta ?? {}, { depth: 4, breakLength: Infinity })}\n`);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/*
 * Options, not an installed runtime: each test file has its own module registry, so an installed runtime is one
 * more native runtime per file, and its handlers on the process's signals (shared by every file) kept it and
 * with it the file's whole module registry alive: about 10 MB per file before any test ran. Set as the
 * defaults, the runtime is made when the file's first connection or worker needs it and shut down by the SDK
 * when its last one closes. No signal handlers: jest owns the test process's signals.
 * The core's own warnings are forwarded to the logger (by default the core prints them to stderr itself, where
 * no message can be told apart); the levels are the SDK's defaults.
 */
Runtime.defaultOptions = {
  logger: new TestLogger(),
  shutdownSignals: [],
  telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) } },
};
