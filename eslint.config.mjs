// Lint rules, including the dependency rules of DESIGN.md: each folder may import only what its layer allows.
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:dns', 'node:child_process', 'fs', 'net', 'http', 'https', 'dns', 'child_process'];
const layer = (name) => [`**/${name}`, `**/${name}/**`, `../${name}`, `../${name}/**`];
// `**/api` (the api/ layer) would also catch the OpenTelemetry facade, `@opentelemetry/api`: let it through.
const forbid = (message, ...groups) => ({ group: [...groups.flat(), '!@opentelemetry/api'], message });
// providers/ by relative path only: `layer('providers')` would also catch core/imports/providers.ts.
const providersLayer = ['../providers', '../providers/**', '../../providers', '../../providers/**', '../../../providers', '../../../providers/**'];

// api/<resource>/ never imports another resource's folder: what two resources share lives in api/http/
// (schemas, views), services/ (use cases such as acceptance) or core/. app.ts and main.ts wire them all.
const apiShared = new Set(['http']);
const apiResources = {
  rules: {
    'no-sibling-import': {
      meta: { type: 'problem', schema: [], messages: { sibling: 'api/{{from}}/ may not import api/{{to}}/: move what they share to api/http/, services/ or core/.' } },
      create(context) {
        const root = import.meta.dirname;
        const resourceOf = (file) => {
          const parts = path.relative(root, file).split(path.sep);
          return parts[0] === 'api' && parts.length > 2 && !apiShared.has(parts[1]) ? parts[1] : null;
        };
        const from = resourceOf(context.filename);
        const check = (node) => {
          const source = node.source;
          if (!from || !source || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
          const to = resourceOf(path.resolve(path.dirname(context.filename), source.value));
          if (to && to !== from) context.report({ node: source, messageId: 'sibling', data: { from, to } });
        };
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
      },
    },
  },
};

export default tseslint.config(
  // packages/*/dist: a package's build output (npm run build inside it), not source.
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**', 'packages/*/dist/**'] },
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
          layer('api'), layer('db'), layer('temporal'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), providersLayer,
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
    // Workers wire every layer together (ports included), but never reach into the API's routes.
    files: ['workers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [forbid('workers/ never import the API.', layer('api'))] }],
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
    files: ['api/*/**/*.ts'],
    plugins: { 'api-resources': apiResources },
    rules: { 'api-resources/no-sibling-import': 'error' },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('db/ depends on core/ only.', layer('api'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), layer('temporal'), providersLayer, ['@temporalio/*'])],
      }],
    },
  },
  {
    // services/ holds use cases only: what the API and activities (or the admin CLI) both do with core/, db/
    // and infra/ (attachment sources, journey events, order recording, event conversions, secret resealing).
    // A storage client goes to db/, a pure rule to core/, other I/O to infra/, a vendor to its provider.
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        // Network and file I/O of its own would make a use case infrastructure: that goes to infra/ or db/.
        paths: io,
        patterns: [forbid('services/ builds on core/, db/ and infra/; never on the API, activities, workflows or workers.',
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
    // infra/: I/O that is neither storage (db/) nor a vendor (providers/) nor a use case (services/): the
    // SSRF-safe HTTP fetcher and the template render pool. Built on core/ and npm libraries only.
    files: ['infra/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [forbid('infra/ builds on core/ only.',
          layer('api'), layer('activities'), layer('workflows'), layer('workers'), layer('services'), layer('db'), ['@temporalio/*', 'express', 'sequelize'])],
      }],
    },
  },
  {
    // The lower layers never reach infra/ (workflows are kept from it by their own rule on node: imports).
    files: ['core/**/*.ts', 'db/**/*.ts', 'workflows/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', { selector: "ImportDeclaration[source.value=/(^|\\/)infra\\//]", message: 'core/, db/ and workflows/ never import infra/.' }] },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
