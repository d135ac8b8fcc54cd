/** Three projects: pure unit tests, time-skipping workflow tests, and integration tests on real services. */
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
  // email-reply-parser, and the htmlparser2 family sanitize-html brings, ship only ESM (Node 24 requires it
  // natively); jest loads them compiled to CommonJS.
  '/(email-reply-parser|sanitize-html/node_modules/[^/]+)/.+\\.js$': ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
};
const project = (name, extra = {}) => ({
  displayName: name,
  testEnvironment: 'node',
  transform,
  testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  // marked ships only ESM, which Node 24 requires natively but jest (without --experimental-vm-modules)
  // cannot; its UMD build is the same code in a form jest loads.
  // The CLI and the MCP server import the typed client by its package name, as their published builds do.
  moduleNameMapper: { '^marked$': '<rootDir>/node_modules/marked/lib/marked.umd.js', '^@messaging-backend/client$': '<rootDir>/packages/client/src' },
  // Everything under node_modules but those ESM-only packages (sanitize-html's are nested: its own path holds a
  // second /node_modules/ that a plain negative lookahead would match).
  transformIgnorePatterns: ['^(?!.*/node_modules/(email-reply-parser|sanitize-html/node_modules/[^/]+)/).*/node_modules/'],
  ...extra,
});

// Projects whose tests run Temporal workers: a quiet runtime, and the run's one workflow bundle (built by the
// global setup, which jest runs only when a file of one of these projects is selected).
const temporalProject = {
  slowTestThreshold: 30,
  globalSetup: '<rootDir>/test/jest-global-setup.ts',
  setupFiles: ['<rootDir>/test/helpers/quiet-temporal-runtime.ts', '<rootDir>/test/helpers/workflow-bundle-setup.ts'],
};

module.exports = {
  projects: [
    project('unit'),
    project('workflows', temporalProject),
    project('integration', temporalProject),
  ],
  testTimeout: 60_000,
  // Three files at a time, whatever the core count jest sees (its default on 2 cores is one): a file spends much
  // of its time waiting on Postgres, Temporal, its own servers or a timeout it proves, so others fill that time.
  // Measured on 2 cores (docs/testing.md): jest 461 s with two, 390-417 s with three, the CPU about 80% busy.
  // The tests that measure behaviour under load assert what the load cannot change (a fixed number of requests
  // all served, bounds with the measurement's own jitter), so a busy machine slows them without failing them.
  // Each file has its own workspace, database copy, task-queue prefix, ports and, for workflow files, test server.
  maxWorkers: 3,
  // A guard: jest replaces a worker that holds more than this after a file. The known per-file leaks are fixed
  // (docs/testing.md, memory per file); a file's timers still pending at its end keep it alive a few seconds more.
  workerIdleMemoryLimit: '800MB',
};
