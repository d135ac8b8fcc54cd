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
  moduleNameMapper: { '^marked$': '<rootDir>/node_modules/marked/lib/marked.umd.js' },
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
  // On 2 cores jest would run every file in its own process, one after another, and that process grows
  // with each file (Temporal workers and clients leave native-backed memory behind) past Node's heap limit
  // over the whole suite. With a limit set, files run in a worker process instead (still one at a time),
  // which jest replaces whenever it holds more than this after a file.
  workerIdleMemoryLimit: '1.5GB',
};
