import { parseArgs } from 'node:util';
import { issueApiKey } from '../api/api-keys/service';
import { apiKeyView } from '../api/api-keys/views';
import { configKeyring, loadConfig } from '../core/config';
import { isPlanName } from '../core/plans';
import { FULL_ACCESS, type Grant, isScope } from '../core/scopes';
import { publishKeyRevocation } from '../db/key-revocations';
import { migrate } from '../db/migrate';
import { closeRedis, createRedis, redisReady } from '../db/redis';
import { findApiKeyWorkspace, listApiKeys, revokeApiKey } from '../db/repositories/api-keys';
import { findWorkspace, insertWorkspace } from '../db/repositories/workspaces';
import { createSequelize } from '../db/sequelize';
import { importJobView } from '../api/imports/views';
import { resealSecrets } from '../services/secret-reseal';
import { createImportFromFile, watchImport } from './admin-imports';
import { useLocalAwsStandIn } from './local-aws';

/** Operations that need no API key: bootstrap a workspace and manage keys. Prints JSON. */
const USAGE = `usage: npm run admin -- <command> [options]
  workspace:create --name NAME [--plan free|starter|pro] [--timezone ZONE]
                                                             prints { workspaceId, apiKey } (full access);
                                                             ZONE (IANA, default UTC): contacts' zone unless their
                                                             \`timezone\` attribute says, for local-time campaigns
  key:create --workspace ID [--scopes a,b] [--name NAME]    prints { id, apiKey }
  key:revoke --id KEY_ID                                     prints { revoked: true, id }
  key:list --workspace ID                                    prints the workspace's active keys
  import:create --workspace ID --file PATH [--provider csv|mailchimp|listmonk] [--mapping 'col=target,...']
                                                             stores the file, starts its import and watches it
  import:watch --id IMPORT_ID                                a progress bar (a line per change when not a
                                                             terminal) until the import ends; prints the job
  secrets:reseal [--batch N] [--dry-run]                     re-seals every stored secret under MASTER_KEY (after a
                                                             rotation, or to upgrade old-format values), N rows at a
                                                             time (500); idempotent; prints what it did per column
                                                             and exits 1 if any value opened under no key`;

class UsageError extends Error {}

function parseScopes(value: string | undefined): Grant[] {
  if (!value) return [FULL_ACCESS];
  const scopes = value.split(',').map((scope) => scope.trim()).filter(Boolean);
  const unknown = scopes.filter((scope) => scope !== FULL_ACCESS && !isScope(scope));
  if (unknown.length || scopes.length === 0) throw new UsageError(`unknown scopes: ${unknown.join(', ')}`);
  return scopes as Grant[];
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      id: { type: 'string' },
      timezone: { type: 'string' },
      file: { type: 'string' },
      mapping: { type: 'string' },
      provider: { type: 'string' },
      batch: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
  });
  const command = positionals[0];
  if (!command) throw new UsageError('a command is required');
  // Beside `npm start` on a developer's machine, files go to the same local S3 stand-in the service reads.
  useLocalAwsStandIn(process.env);
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  try {
    if (config.MIGRATE_ON_START) await migrate(db);
    switch (command) {
      case 'workspace:create': {
        const plan = values.plan ?? 'free';
        if (!isPlanName(plan)) throw new UsageError(`unknown plan ${plan}`);
        const timezone = values.timezone ?? 'UTC';
        if (!Intl.supportedValuesOf('timeZone').includes(timezone) && timezone !== 'UTC') throw new UsageError(`unknown time zone ${timezone}`);
        const workspace = await insertWorkspace(db, { name: required(values.name, '--name'), plan, timezone });
        const key = await issueApiKey(db, workspace.id, { name: 'admin', scopes: [FULL_ACCESS] });
        return print({ workspaceId: workspace.id, apiKey: key.secret });
      }
      case 'key:create': {
        const workspaceId = required(values.workspace, '--workspace');
        if (!(await findWorkspace(db, workspaceId))) throw new UsageError(`no workspace ${workspaceId}`);
        const key = await issueApiKey(db, workspaceId, { name: values.name, scopes: parseScopes(values.scopes) });
        return print({ id: key.record.id, apiKey: key.secret });
      }
      case 'key:revoke': {
        const id = required(values.id, '--id');
        const workspaceId = await findApiKeyWorkspace(db, id);
        const hash = workspaceId ? await revokeApiKey(db, workspaceId, id) : null;
        if (!hash) throw new UsageError(`no active key ${id}`);
        // Running APIs evict the key when told; if Redis is away, their cache TTL bounds the delay.
        const redis = createRedis(config.REDIS_URL);
        if (await redisReady(redis, 2_000)) await publishKeyRevocation(redis, hash);
        await closeRedis(redis);
        return print({ revoked: true, id });
      }
      case 'key:list': {
        const keys = await listApiKeys(db, required(values.workspace, '--workspace'));
        return print(keys.map(apiKeyView));
      }
      case 'import:create': {
        const workspaceId = required(values.workspace, '--workspace');
        if (!(await findWorkspace(db, workspaceId))) throw new UsageError(`no workspace ${workspaceId}`);
        const id = await createImportFromFile(db, config, { ...values, file: required(values.file, '--file') });
        return print(importJobView(await watchImport(db, id)));
      }
      case 'import:watch':
        return print(importJobView(await watchImport(db, required(values.id, '--id'))));
      case 'secrets:reseal': {
        const batchSize = Number(values.batch ?? 500);
        if (!Number.isInteger(batchSize) || batchSize < 1) throw new UsageError('--batch must be a positive whole number');
        const reports = await resealSecrets(db, configKeyring(config), { batchSize, dryRun: values['dry-run'] });
        print({ keyId: configKeyring(config).current.id, dryRun: Boolean(values['dry-run']), columns: reports });
        // A value no key opens must not be forgotten: its key has to stay (or come back) in MASTER_KEY_PREVIOUS.
        if (reports.some((report) => report.failed.length > 0)) process.exitCode = 1;
        return;
      }
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } finally {
    await db.close();
  }
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) console.error(`${err.message}\n\n${USAGE}`);
  else console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
