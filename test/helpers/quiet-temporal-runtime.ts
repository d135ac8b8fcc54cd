import { DefaultLogger, Runtime } from '@temporalio/worker';

// Worker state changes are logged at INFO; in test output only warnings and errors help.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process by an earlier test file.
}
