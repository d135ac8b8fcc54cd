// The import rules that ESLint's per-file no-restricted-imports cannot see (dependency-cruiser reads the whole
// graph): no import cycle anywhere, type-only imports included (a type-only cycle still ties the two folders
// together and is how the one cycle this project had began), and the layer rules of DESIGN.md for temporal/.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'No import cycles, type-only ones included (DESIGN.md, layout and dependency rules).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'activities-not-to-workflows',
      severity: 'error',
      comment: 'Activities never import workflows/: types both share live in core/.',
      from: { path: '^activities/' },
      to: { path: '^workflows/' },
    },
    {
      name: 'activities-not-to-temporal',
      severity: 'error',
      comment: 'Activities reach starts and signals through ports (activities/ports.ts), wired in workers/.',
      from: { path: '^activities/' },
      to: { path: '^temporal/' },
    },
    {
      name: 'only-temporal-builds-clients',
      severity: 'error',
      comment: 'temporal/ imports core/ and workflows/ only (typed starts name the workflow functions).',
      from: { path: '^temporal/' },
      to: { path: '^(api|activities|services|db|workers|scripts|bench|test)/' },
    },
  ],
  options: {
    // Type-only imports count: a cycle made of `import type` is still a cycle between folders.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // test/fixtures/import-rules breaks each rule on purpose (test/unit/import-rules.test.ts).
    exclude: { path: '^(node_modules|\\.data|\\.tools|coverage|test/fixtures/import-rules)/' },
  },
};
