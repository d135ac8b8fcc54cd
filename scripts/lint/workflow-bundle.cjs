// What the workflow bundle reaches: workflows/ and every file they import at run time (type-only imports are
// erased before bundling, so they are left out here). None of it may import a Node builtin: the bundler
// refuses them, or worse, a stub stands in and the workflow breaks when it runs (DESIGN.md, workflows).
const { builtinModules } = require('node:module');

const builtins = builtinModules.filter((name) => !name.startsWith('_')).map((name) => name.replace(/[/.]/g, '\\$&'));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-node-builtins-in-workflow-bundle',
      severity: 'error',
      comment: 'A file that workflows/ imports (directly or through core/) uses a Node builtin.',
      from: { path: '^workflows/' },
      to: { path: [`^node:`, `^(${builtins.join('|')})$`], reachable: true },
    },
  ],
  options: {
    // Erased imports do not reach the bundle: `import type` from activities/ is how workflows see them.
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.data|\\.tools|coverage)/' },
  },
};
