import { appendFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { DefaultLogger, type Logger, type LogLevel, type LogMetadata, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

/**
 * The message the SDK logs as a warning in a passing run that nothing can act on, matched exactly: an
 * activity-only worker (the `sends` and `bulk` queues' workers, by design: workers/create-worker.ts) is told it
 * has no workflows; that is its configuration, not a fault.
 */
function nothingToActOn(message: string): boolean {
  return message === 'No workflows registered, not polling for workflow tasks';
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
 * The core (the native part) prints its own errors and nothing below them. Its warnings are not forwarded to
 * this logger: the core bridge keeps every forwarding runtime's receiver after that runtime shuts down, and
 * through the receiver this logger and the file's whole module registry, 15-20 MB per file that ran a worker
 * (the jest workers reached 1.3 GB). The warnings given up are the Java test server's reported version (it is
 * older than 1.16, so the core warns once per worker that heartbeat details may be lost) and, in a failing test,
 * the core's poll and task failures; the SDK's own lines ("Activity failed", "Workflow failed") still come here.
 */
Runtime.defaultOptions = {
  logger: new TestLogger(),
  shutdownSignals: [],
  telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }) } },
};
