// Lint rules, including the dependency rules of DESIGN.md: each folder may import only what its layer allows.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:dns', 'node:child_process', 'fs', 'net', 'http', 'https', 'dns', 'child_process'];
const layer = (name) => [`**/${name}`, `**/${name}/**`, `../${name}`, `../${name}/**`];
const forbid = (message, ...groups) => ({ group: groups.flat(), message });

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: io,
        patterns: [forbid('core/ is pure: no I/O, no framework, no other layer.',
          layer('api'), layer('db'), layer('temporal'), layer('activities'), layer('workflows'), layer('workers'), layer('services'),
          ['sequelize', 'pg', 'ioredis', 'express', '@temporalio/*', 'pino', '@aws-sdk/*'])],
      }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          forbid('Workflows are deterministic: only core/, @temporalio/workflow and type imports of activities/.',
            layer('api'), layer('db'), layer('workers'), layer('services'), ['node:*', 'sequelize', 'ioredis', 'express', '@temporalio/worker', '@temporalio/activity']),
          forbid('Workflow code never uses the Temporal client: starts and signals live in temporal/.', layer('temporal'), ['@temporalio/client']),
          { ...forbid('Workflows see activities only through `import type`.', layer('activities')), allowTypeImports: true },
        ],
      }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          forbid('Activities never import the API, the workers or workflow code.', layer('api'), layer('workers'), layer('workflows'), ['@temporalio/workflow']),
          // Starts and signals reach activities as ports (activities/ports.ts), implemented in temporal/ and wired in workers/.
          forbid('Activities reach Temporal only through their ports (activities/ports.ts).', layer('temporal'), ['@temporalio/client']),
        ],
      }],
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('The API starts workflows through temporal/; it never imports activities, workflow code or worker code.', layer('activities'), layer('workflows'), layer('workers'))],
      }],
    },
  },
  {
    // The Temporal client side: typed starts, signals and queries name the workflow functions; nothing else.
    files: ['temporal/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('temporal/ builds on core/ and workflows/ only.', layer('api'), layer('activities'), layer('services'), layer('db'), layer('workers'), ['@temporalio/worker', '@temporalio/activity', 'express', 'sequelize', 'ioredis'])],
      }],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('db/ depends on core/ only.', layer('api'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), layer('temporal'), ['@temporalio/*'])],
      }],
    },
  },
  {
    // Side effects that both the API (when a send is accepted) and activities (when it is sent) need,
    // beyond storage: attachment sources and the SSRF-safe fetcher. Built on core/ and db/ only.
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('services/ builds on core/ and db/; never on the API, activities, workflows or workers.',
          layer('api'), layer('activities'), layer('workflows'), layer('workers'), ['@temporalio/*', 'express'])],
      }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
