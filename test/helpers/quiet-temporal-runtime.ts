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

/** Worker state changes are logged at INFO; in test output only warnings and errors help, less the ones above. */
class TestLogger implements Logger {
  private readonly output = new DefaultLogger('WARN');

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (!nothingToActOn(message)) this.output.log(level, message, meta);
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

try {
  // The core's own warnings are forwarded to this logger (by default the core prints them to stderr itself,
  // where no message can be told apart); the levels are the SDK's defaults.
  Runtime.install({
    logger: new TestLogger(),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) } },
  });
} catch {
  // Already installed in this process by an earlier test file.
}
