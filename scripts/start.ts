import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../core/config';
import { connectTemporal } from '../temporal/connection';
import { ChildSupervisor } from './child-supervisor';
import { portAnswers } from './port-probe';
import { registerSearchAttributes } from './search-attributes';
import { devServerArgs, temporalCliPath } from './temporal-cli';
import { LOCAL_AWS_PORT, useLocalAwsStandIn } from './local-aws';

/**
 * `npm start`: the local stack in one terminal. Starts PostgreSQL and Redis (project-local), a
 * Temporal server on that PostgreSQL with its Web UI unless one already answers at TEMPORAL_ADDRESS (the
 * dev server and its SQLite file with TEMPORAL_PERSISTENCE=sqlite), runs migrations, then the API
 * and the worker. A child that dies is started again with backoff while the others keep running (see
 * child-supervisor.ts). Ctrl-C stops everything this script started.
 */
const root = resolve(__dirname, '..');
const config = loadConfig(process.env);
const children = new ChildSupervisor(root);
let stopping = false;

function run(name: string, command: string, args: string[], env: Record<string, string> = {}): void {
  children.start({ name, command, args, env });
}

function services(action: 'start' | 'stop' | 'status'): string {
  return execFileSync('bash', ['scripts/services.sh', action], { cwd: root, encoding: 'utf8' });
}

async function temporalAnswers(timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  do {
    try {
      const client = await connectTemporal(config, { connectTimeout: 1_000 });
      await client.connection.close();
      return true;
    } catch {
      await new Promise((done) => setTimeout(done, 250));
    }
  } while (Date.now() < deadline);
  return false;
}

/**
 * A dev server left running, or one an older checkout started, may lack a newer search attribute; a cluster
 * that refuses (Temporal Cloud registers them in its own console) is only told about (docs/delivery.md).
 */
async function registerMissingSearchAttributes(): Promise<void> {
  const client = await connectTemporal(config);
  try {
    const added = await registerSearchAttributes(client, config.TEMPORAL_NAMESPACE);
    if (added.length) console.log(`Temporal search attributes registered: ${added.join(', ')}`);
  } catch (err) {
    console.warn(`Could not register the Temporal search attributes (docs/delivery.md#search-attributes): ${(err as Error).message}`);
  } finally {
    await client.connection.close();
  }
}

/**
 * Where the Temporal that `npm start` runs keeps its state: the project's PostgreSQL (faster than the dev
 * server's SQLite file: docs/delivery.md#running-temporal-on-postgresql), or that file as the way back. A switch
 * of this script, not of the service: the API and workers only see TEMPORAL_ADDRESS.
 */
function temporalPersistence(): 'postgresql' | 'sqlite' {
  const value = process.env.TEMPORAL_PERSISTENCE || 'postgresql';
  if (value === 'postgresql' || value === 'sqlite') return value;
  throw new Error(`TEMPORAL_PERSISTENCE must be postgresql or sqlite, not "${value}"`);
}

const TEMPORAL_UI_PORT = 8233;

/** The dev server with its SQLite file and its embedded UI, as before Temporal ran on PostgreSQL. */
function startTemporalOnSqlite(): void {
  mkdirSync(resolve(root, '.data/temporal'), { recursive: true });
  run('temporal', temporalCliPath(process.env), devServerArgs({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    dbFile: resolve(root, '.data/temporal/dev.db'),
    uiPort: TEMPORAL_UI_PORT,
  }));
}

/**
 * The Temporal server on the project's PostgreSQL and its Web UI, each a supervised child: `run` execs the
 * server, so its death is seen and it is started again like the API. Frontend on TEMPORAL_ADDRESS, the
 * server's other services on the next nine ports (7234-7242 by default, clear of everything started here).
 * Answers the UI's address, or why there is none.
 */
async function startTemporalOnPostgres(): Promise<string> {
  const env = {
    TEMPORAL_PG_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_PG_UI_PORT: String(TEMPORAL_UI_PORT),
    TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
  };
  const step = (name: string): void => {
    execFileSync('bash', ['scripts/temporal-postgres.sh', name], { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  };
  const bin = resolve(process.env.TOOLS_DIR ?? resolve(root, '.tools'), 'bin');
  if (!existsSync(resolve(bin, 'temporal-server'))) {
    console.log('[start] building the Temporal server and its Web UI from source: the first start takes several minutes');
  }
  // Once in the foreground before the child, so a build or schema failure stops npm start with its message
  // instead of a restart loop; `run` repeats it in seconds.
  step('prepare');
  run('temporal', 'bash', ['scripts/temporal-postgres.sh', 'run'], env);
  if (!(await temporalAnswers(120_000))) throw new Error(`Temporal did not start at ${config.TEMPORAL_ADDRESS} (its [temporal] lines above say why)`);
  step('namespace');
  if (!existsSync(resolve(bin, 'temporal-ui-server'))) return 'none: its build failed (bash scripts/provision/temporal-server.sh says why)';
  run('temporal-ui', 'bash', ['scripts/temporal-postgres.sh', 'ui'], env);
  return `http://localhost:${TEMPORAL_UI_PORT}`;
}

const startedServices = !services('status').includes('postgres: running');

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await children.stop(config.SHUTDOWN_TIMEOUT_MS);
  if (startedServices) services('stop');
  process.exit(code);
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  const persistence = temporalPersistence();
  services('start');

  let temporalUi = 'the Web UI of your Temporal cluster';
  let temporal = `${config.TEMPORAL_ADDRESS}   (already running, yours)`;
  if (!(await temporalAnswers(500))) {
    if (persistence === 'sqlite') {
      startTemporalOnSqlite();
      if (!(await temporalAnswers(60_000))) throw new Error(`Temporal did not start at ${config.TEMPORAL_ADDRESS}`);
      temporalUi = `http://localhost:${TEMPORAL_UI_PORT}`;
      temporal = `${config.TEMPORAL_ADDRESS}   (dev server, state in .data/temporal/dev.db)`;
    } else {
      temporalUi = await startTemporalOnPostgres();
      temporal = `${config.TEMPORAL_ADDRESS}   (state in PostgreSQL: databases temporal, temporal_visibility)`;
    }
  }
  await registerMissingSearchAttributes();

  // Without a real AWS endpoint configured, S3 (attachments) and SES go to the local stand-in.
  if (useLocalAwsStandIn(process.env)) {
    run('aws', resolve(root, '.tools/bin/moto-server'), ['-H', '127.0.0.1', '-p', String(LOCAL_AWS_PORT)]);
  }

  // With the SMTP provider on a local address, mail goes to a catcher whose page shows every message,
  // unless a relay of the developer's own already listens there: then that relay gets the mail.
  let mailCatcher = '';
  if (config.EMAIL_PROVIDER === 'smtp') {
    const smtp = new URL(config.SMTP_URL);
    const port = smtp.port || '25';
    // Host and port only: the URL may carry the relay's credentials.
    const relay = `${smtp.hostname}:${port}`;
    if (!['127.0.0.1', 'localhost'].includes(smtp.hostname)) {
      mailCatcher = `\n  Mail relay     ${relay}   (SMTP_URL)`;
    } else if (await portAnswers(smtp.hostname, Number(port))) {
      console.log(`[start] an SMTP server already listens at ${relay}: sending through it, no mail catcher started`);
      mailCatcher = `\n  Mail relay     ${relay}   (already running, yours; the mail catcher was not started)`;
    } else {
      const webPort = 1080;
      run('mail', 'maildev', ['--smtp', port, '--ip', '127.0.0.1', '--web', String(webPort), '--web-ip', '127.0.0.1']);
      mailCatcher = `\n  Mail catcher   http://localhost:${webPort}   (every email the service sends locally lands here)`;
    }
  }

  // Unless real resolvers are configured, domains are checked against a local DNS server that publishes
  // the records of every domain added here, so they verify and can send to the mail catcher.
  let localDns = '';
  if (!process.env.DNS_SERVERS) {
    const dnsPort = 5354;
    run('dns', 'tsx', ['scripts/local-dns.ts'], { LOCAL_DNS_PORT: String(dnsPort) });
    process.env.DNS_SERVERS = `127.0.0.1:${dnsPort}`;
    localDns = `\n  Local DNS      127.0.0.1:${dnsPort}   (publishes every domain's records, so domains verify locally)`;
  }

  execFileSync('tsx', ['scripts/migrate.ts'], { cwd: root, stdio: 'inherit' });
  run('api', 'tsx', ['api/main.ts']);
  run('worker', 'tsx', ['workers/main.ts']);
  run('inbound', 'tsx', ['workers/inbox/smtp.ts']);

  const base = config.PUBLIC_BASE_URL;
  console.log(`
  API            ${base}/api/v1
  API reference  ${base}/api/v1/docs   (OpenAPI: ${base}/api/v1/openapi.json)
  Health         ${base}/readyz   Metrics: ${base}/metrics
  Temporal       ${temporal}
  Temporal UI    ${temporalUi}
  Inbound SMTP   ${config.INBOUND_SMTP_HOST}:${config.INBOUND_SMTP_PORT}   (the MX of inbound-enabled domains)${mailCatcher}${localDns}

  Create a workspace and its first key (in another terminal):
    npm run admin -- workspace:create --name "My company"
  then:
    curl ${base}/api/v1/usage -H "Authorization: Bearer <apiKey>"

  Ctrl-C stops everything.
`);
}

main().catch((err: unknown) => {
  console.error('[start]', err instanceof Error ? err.message : err);
  void stop(1);
});
