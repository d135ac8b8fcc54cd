import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSequelize } from '../../db/sequelize';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { freePort } from '../helpers/free-port';
import { Application } from './application';
import { startCountingSink } from './counting-sink';
import { checkInvariants, type Figures } from './invariants';
import { type Sender, startLoad } from './load';
import { FAULTS_DIR, LOG_DIR, PROCESS_GROUPS_FILE, sleep } from './processes';
import { providerOutage } from './provider-outage';
import { type ScenarioContext, SCENARIOS as FAULT_SCENARIOS } from './scenarios';
import { SuitePostgres, SuiteRedis, SuiteTemporal } from './services';

/**
 * `npm run test:faults`: the real stack as separate processes (its own PostgreSQL, Redis and Temporal dev
 * server, the API, the worker, an SMTP sink that counts what it receives), real load, one fault after
 * another, and the invariant checker after each (docs/reliability.md). Arguments name scenarios to run.
 */

/** The provider outage lives in its own file (it brings its own backlog and workspaces). */
const SCENARIOS = [...FAULT_SCENARIOS, providerOutage];

const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');
const RATE_LIMIT_PER_SECOND = 40;
const SEND_RATE_PER_SECOND = 100;
/** Load: clients sending back to back with this pause, over this many workspaces. */
const CLIENTS = 4;
const PAUSE_MS = 200;
const WORKSPACES = 3;
/** Load keeps going this long after a scenario's fault is over, so recovery is tested under load too. */
const LOAD_AFTER_MS = 2_000;
const SETTLE_BOUND_MS = 180_000;

interface Result {
  name: string;
  fault: string;
  proves: string;
  figures: Figures | null;
  recoverySeconds: number | null;
  unexpectedExits: string[];
  violations: string[];
  seconds: number;
}

async function main(): Promise<number> {
  const started = Date.now();
  const only = process.argv.slice(2);
  const scenarios = only.length ? SCENARIOS.filter((scenario) => only.includes(scenario.name)) : SCENARIOS;
  if (only.length && scenarios.length !== only.length) throw new Error(`unknown scenario among ${only.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);

  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  writeFileSync(PROCESS_GROUPS_FILE, '');
  SuiteTemporal.clear();
  const [pgPort, redisPort, temporalPort, apiPort, metricsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const postgres = new SuitePostgres(pgPort);
  const redis = new SuiteRedis(redisPort);
  const temporal = new SuiteTemporal(temporalPort);
  const sink = await startCountingSink();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    MIGRATE_ON_START: 'false',
    MASTER_KEY,
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    TEMPORAL_ADDRESS: temporal.address,
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: sink.url,
    SEND_RATE_PER_SECOND: String(SEND_RATE_PER_SECOND),
    RATE_LIMIT_PER_SECOND: String(RATE_LIMIT_PER_SECOND),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'faults',
    AWS_SECRET_ACCESS_KEY: 'faults',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    DNS_SERVERS: '127.0.0.1:9',
  };
  const app = new Application({ env, apiPort, metricsPort });
  const results: Result[] = [];
  const db = createSequelize(postgres.url);
  try {
    console.log(`faults: PostgreSQL :${pgPort}, Redis :${redisPort}, Temporal :${temporalPort}, API :${apiPort}, worker metrics :${metricsPort}, sink ${sink.url}`);
    await postgres.init();
    await redis.start();
    await temporal.start();
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], { cwd: resolve(__dirname, '../..'), env: { ...process.env, ...env }, stdio: 'ignore' });
    await Promise.all([app.start('api'), app.start('worker')]);
    app.startScraping();
    console.log(`faults: stack up in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    for (const scenario of scenarios) {
      const scenarioStarted = Date.now();
      const exitsBefore = app.unexpectedExits.length;
      const counterBefore = await app.unknownOutcomeTotal();
      const result: Result = { name: scenario.name, fault: scenario.fault, proves: scenario.proves, figures: null, recoverySeconds: null, unexpectedExits: [], violations: [], seconds: 0 };
      const senders: Sender[] = [];
      for (let index = 0; index < WORKSPACES; index += 1) {
        const workspace = await createTestWorkspace(db, { plan: 'pro', name: `faults ${scenario.name} ${index}` });
        senders.push({ ...workspace, domain: (await addTestDomain(db, workspace.workspaceId, { masterKey: MASTER_KEY })).domain });
      }
      const load = startLoad(app.apiUrl, senders, { clients: CLIENTS, pauseMs: PAUSE_MS, ...scenario.load, tag: scenario.name });
      const context: ScenarioContext = {
        app, postgres, redis, temporal, sink, db, load,
        probeKey: async () => (await createTestWorkspace(db, { plan: 'pro', name: 'faults probe' })).apiKey,
        rateLimitPerSecond: RATE_LIMIT_PER_SECOND,
        sendRatePerSecond: SEND_RATE_PER_SECOND,
        sender: async (name) => {
          const workspace = await createTestWorkspace(db, { plan: 'pro', name });
          return { ...workspace, domain: (await addTestDomain(db, workspace.workspaceId, { masterKey: MASTER_KEY })).domain };
        },
      };
      try {
        const outcome = await scenario.run(context);
        result.recoverySeconds = Math.round(outcome.recoverySeconds * 10) / 10;
        result.violations.push(...outcome.violations);
        await sleep(LOAD_AFTER_MS);
      } catch (error) {
        result.violations.push(`scenario broke off: ${error instanceof Error ? error.message : String(error)}`);
      }
      const record = await load.stop();
      const verdict = await checkInvariants({ db, sink, app, record, workspaceIds: senders.map((sender) => sender.workspaceId), settleBoundMs: SETTLE_BOUND_MS, counterBefore });
      result.figures = verdict.figures;
      result.violations.push(...verdict.violations, ...(scenario.bit?.(verdict.figures) ?? []));
      result.unexpectedExits = app.unexpectedExits.slice(exitsBefore).map((exit) => `${exit.role} died at +${((exit.at - scenarioStarted) / 1000).toFixed(1)} s`);
      // A dependency's fault may cost a process its work, never its life: each death nobody caused fails the
      // scenario even though the supervisor started the process again and the invariants held.
      result.violations.push(...result.unexpectedExits.map((exit) => `a process died that nobody killed: ${exit}`));
      result.seconds = Math.round((Date.now() - scenarioStarted) / 100) / 10;
      results.push(result);
      report(result, [...record.statuses].map(([status, count]) => `${status}:${count}`).join(' '));
    }
  } finally {
    await app.stopAll().catch(() => undefined);
    await temporal.kill().catch(() => undefined);
    await redis.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    postgres.stop();
    await sink.close();
  }
  const total = (Date.now() - started) / 1000;
  writeFileSync(resolve(FAULTS_DIR, 'results.json'), JSON.stringify({ at: new Date().toISOString(), totalSeconds: total, results }, null, 2));
  const failed = results.filter((result) => result.violations.length > 0).length + (scenarios.length - results.length);
  console.log(`faults: ${total.toFixed(0)} s in all; figures in .data/faults/results.json, logs in .data/faults/logs`);
  console.log(`${results.length - failed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

function report(result: Result, statuses: string): void {
  const f = result.figures;
  const verdict = result.violations.length ? 'FAIL' : 'ok';
  console.log(`\n[${verdict}] ${result.name}: ${result.fault} (${result.seconds} s)`);
  if (f) {
    console.log(
      `  accepted ${f.accepted}, delivered once ${f.deliveredOnce} (more than once ${f.deliveredMoreThanOnce}), failed (550) ${f.failedPermanently}, lost ${f.lost}, ` +
        `duplicated ${f.duplicatedCounted} counted + ${f.duplicatedUncounted} uncounted (counter ${f.unknownOutcomeCounter}), ` +
        `recovered in ${result.recoverySeconds ?? '-'} s, settled ${f.settleSeconds} s after the load; answers ${statuses}`,
    );
  }
  for (const violation of result.violations) console.log(`  VIOLATION: ${violation}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('faults:', error);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
