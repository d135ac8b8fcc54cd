// Lint rules, including the dependency rules of DESIGN.md: each folder may import only what its layer allows.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:dns', 'node:child_process', 'fs', 'net', 'http', 'https', 'dns', 'child_process'];
const layer = (name) => [`**/${name}`, `**/${name}/**`, `../${name}`, `../${name}/**`];
const forbid = (message, ...groups) => ({ group: groups.flat(), message });
// providers/ by relative path only: `layer('providers')` would also catch core/imports/providers.ts.
const providersLayer = ['../providers', '../providers/**', '../../providers', '../../providers/**', '../../../providers', '../../../providers/**'];

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
          layer('api'), layer('db'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), providersLayer,
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
            layer('api'), layer('db'), layer('workers'), layer('services'), providersLayer, ['node:*', 'sequelize', 'ioredis', 'express', '@temporalio/worker', '@temporalio/activity']),
          // workflows/starts.ts names the client's types for typed starts; the bundle never reaches it.
          { ...forbid('Workflow code never uses the Temporal client.', ['@temporalio/client']), allowTypeImports: true },
          { ...forbid('Workflows see activities only through `import type`.', layer('activities')), allowTypeImports: true },
        ],
      }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('Activities never import the API, the workers or workflow code.', layer('api'), layer('workers'), ['@temporalio/workflow'])],
      }],
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('The API starts workflows; it never calls activities or worker code.', layer('activities'), layer('workers'))],
      }],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('db/ depends on core/ only.', layer('api'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), providersLayer, ['@temporalio/*'])],
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
    // One folder per vendor (DESIGN.md "Providers"): its client, send adapter, callback parser and status
    // mapping, all in the vocabulary of core/delivery.ts. Whatever an adapter needs from storage or from
    // another layer (a workspace's account, the SSRF-safe fetcher) its caller reads and hands in.
    files: ['providers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('providers/ build on core/, their vendor SDK and node builtins only; the caller hands in anything else.',
          layer('api'), layer('db'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), layer('temporal'),
          ['sequelize', 'pg', 'ioredis', 'express', '@temporalio/*'])],
      }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
