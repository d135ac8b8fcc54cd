import type { Sequelize } from 'sequelize';
import type { Application } from './application';
import type { CountingSink } from './counting-sink';
import type { Figures } from './invariants';
import { maxInWindow } from '../helpers/send-windows';
import { type Load, REQUEST_TIMEOUT_MS, type Sender } from './load';
import { sleep, waitFor } from './processes';
import type { SuitePostgres, SuiteRedis, SuiteTemporal } from './services';

/** What a scenario can reach: the stack, the sink, and the load it drives. */
export interface ScenarioContext {
  app: Application;
  postgres: SuitePostgres;
  redis: SuiteRedis;
  temporal: SuiteTemporal;
  sink: CountingSink;
  db: Sequelize;
  /** Load already running from this scenario's own workspaces. */
  load: Load;
  /** A fresh full-access key (its workspace not part of the load), for probes of the edge. */
  probeKey: () => Promise<string>;
  rateLimitPerSecond: number;
  /** The provider rate the worker is configured with (SEND_RATE_PER_SECOND), its whole share as the only worker. */
  sendRatePerSecond: number;
  /** A workspace of the scenario's own (not part of the load), with a key and a verified domain. */
  sender: (name: string) => Promise<Sender>;
}

export interface ScenarioOutcome {
  /** Seconds from the fault's end (the process or service back) until the service made progress again. */
  recoverySeconds: number;
  /** What the scenario itself found wrong, beyond the common invariants. */
  violations: string[];
}

export interface Scenario {
  name: string;
  fault: string;
  proves: string;
  /** Load other than the default, where the fault needs more requests in flight. */
  load?: { clients: number; pauseMs: number };
  run: (context: ScenarioContext) => Promise<ScenarioOutcome>;
  /** Whether the fault bit: what the figures must show, beyond the common invariants (violations). */
  bit?: (figures: Figures) => string[];
}

const RECOVERY_BOUND_MS = 180_000;

/** How long `redis-down` keeps Redis stopped: FAULTS_REDIS_DOWN_SECONDS, 2 minutes by default (issue 30). */
const REDIS_DOWN_MS = Number(process.env.FAULTS_REDIS_DOWN_SECONDS ?? 120) * 1_000;

/** How late a woken sender may still use its turn (LATENESS_MS in activities/pacing.ts), which the bound allows. */
const PACER_LATENESS_S = 0.05;

/** Deliveries over the pacer's bound in any sliding window of 1 s and of 10 s: floor((w + lateness) × rate) + 1. */
function overRate(arrivals: readonly number[], ratePerSecond: number): string[] {
  return [1, 10].flatMap((seconds) => {
    const most = maxInWindow(arrivals, seconds * 1_000);
    const bound = Math.floor((seconds + PACER_LATENESS_S) * ratePerSecond) + 1;
    return most > bound ? [`${most} deliveries in ${seconds} s while Redis was down, above the bound ${bound} at ${ratePerSecond}/s`] : [];
  });
}

/** Waits until load has been accepted and sent for a moment, so the fault lands on a send path at work. */
async function underWay(context: ScenarioContext, accepted = 60): Promise<void> {
  const deliveredBefore = context.sink.lastDeliveryAt();
  await waitFor('load to be accepted', () => context.load.acceptedCount() >= accepted, 60_000);
  await waitFor('deliveries under load', () => context.sink.lastDeliveryAt() > deliveredBefore, 60_000);
}

/** Seconds from `since` until something new reached the provider. */
async function nextDelivery(context: ScenarioContext, since: number): Promise<number> {
  await waitFor('a delivery after the fault', () => context.sink.lastDeliveryAt() > since, RECOVERY_BOUND_MS, 100);
  return (context.sink.lastDeliveryAt() - since) / 1000;
}

/** Seconds from `since` until a client was answered 202 again. */
async function nextAccept(context: ScenarioContext, since: number): Promise<number> {
  await waitFor('a 202 after the fault', () => context.load.record.lastAcceptAt > since, RECOVERY_BOUND_MS, 100);
  return (context.load.record.lastAcceptAt - since) / 1000;
}

/** A trigger of the suite's own database that makes every accepted send's key insert take 300 ms. */
async function slowAccepts(db: Sequelize, on: boolean): Promise<void> {
  await db.query(
    on
      ? `CREATE OR REPLACE FUNCTION faults_slow_accept() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NEW; END $$;
         CREATE TRIGGER faults_slow_accept BEFORE INSERT ON message_keys FOR EACH ROW EXECUTE FUNCTION faults_slow_accept()`
      : 'DROP TRIGGER IF EXISTS faults_slow_accept ON message_keys',
  );
}

/** Fires more requests at once on one key than its limit allows; how many were answered, limited, and how slowly. */
async function burst(context: ScenarioContext, key: string, count: number) {
  const started = Date.now();
  const statuses = await Promise.all(
    Array.from({ length: count }, () =>
      fetch(`${context.app.apiUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
        .then((response) => response.status)
        .catch(() => 0),
    ),
  );
  return { ok: statuses.filter((status) => status === 200).length, limited: statuses.filter((status) => status === 429).length, other: statuses.filter((status) => status !== 200 && status !== 429), ms: Date.now() - started };
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'api-kill',
    fault: 'kill -9 of the API during accepts, three times, with PostgreSQL slowed to 300 ms per accept; clients retry with the same key',
    proves: 'a send cut off mid-accept is either stored and answered 200 duplicate with the first id on retry, or not stored at all: no key gets a second id, nothing accepted is lost',
    // Many requests in flight at each kill. The slow accept keeps them inside PostgreSQL when the API dies:
    // PostgreSQL finishes and commits a statement whose client is gone, so their answers are lost after the
    // commit, the case a retry with the same key must settle.
    load: { clients: 10, pauseMs: 400 },
    async run(context) {
      await underWay(context);
      let recovery = 0;
      await slowAccepts(context.db, true);
      try {
        for (let round = 0; round < 3; round += 1) {
          await sleep(1_000);
          await context.app.kill('api');
          await sleep(1_000);
          const restarted = Date.now();
          await context.app.start('api');
          recovery = Math.max(recovery, await nextAccept(context, restarted));
        }
      } finally {
        await slowAccepts(context.db, false);
      }
      return { recoverySeconds: recovery, violations: [] };
    },
    bit: (figures) => (figures.answeredDuplicate >= 1 ? [] : ['no retry was answered 200 duplicate: no kill landed after a commit']),
  },
  {
    name: 'worker-kill',
    fault: 'kill -9 of the worker in the middle of provider calls, before the provider accepted them (the provider had the bytes and had not answered)',
    proves: 'an attempt that died before the provider accepted its message is retried after its heartbeat and claim lapse, and the message is sent once',
    async run(context) {
      await underWay(context);
      // Stalls of an earlier scenario may still be open (they last 30 s): only this one's count.
      const stalledBefore = context.sink.stalledCalls();
      await context.sink.setMode('stall', { stallMs: 30_000 });
      await waitFor('provider calls in the middle', () => context.sink.stalledCalls() >= stalledBefore + 3, 60_000, 20);
      await context.app.kill('worker');
      await context.sink.setMode('accept');
      await sleep(1_000);
      const restarted = Date.now();
      await context.app.start('worker');
      return { recoverySeconds: await nextDelivery(context, restarted), violations: [] };
    },
    bit: (figures) => (figures.unknownOutcomeCounter >= 3 ? [] : [`only ${figures.unknownOutcomeCounter} attempts died holding a claim: the kill did not land mid-call`]),
  },
  {
    name: 'worker-kill-mid-send',
    fault: 'kill -9 of the worker while the provider holds messages it accepted but has not acknowledged yet (1.5 s late answers)',
    proves: 'a message the provider took just before the worker died is sent again (at least once), and every such second copy is counted in messaging_delivery_outcome_unknown_total',
    async run(context) {
      await underWay(context);
      await context.sink.setMode('accept', { ackDelayMs: 1_500 });
      await waitFor('messages held by the provider', () => context.sink.heldAcks() >= 3, 60_000, 20);
      await context.app.kill('worker');
      await context.sink.setMode('accept');
      await sleep(1_000);
      const restarted = Date.now();
      await context.app.start('worker');
      return { recoverySeconds: await nextDelivery(context, restarted), violations: [] };
    },
    bit: (figures) => (figures.duplicatedCounted >= 1 ? [] : ['no message was sent twice: the kill did not land after a provider acceptance']),
  },
  {
    name: 'temporal-kill',
    fault: 'kill -9 of the Temporal dev server for 5 s, then a restart on the same database file',
    proves: 'accepting never waits on Temporal (the outbox); workflows in flight resume after the restart and the dispatcher hands over the backlog',
    async run(context) {
      await underWay(context);
      await context.temporal.kill();
      const acceptsBefore = context.load.acceptedCount();
      await sleep(5_000);
      const violations = context.load.acceptedCount() > acceptsBefore ? [] : ['no message was accepted while Temporal was down'];
      const restarted = Date.now();
      await context.temporal.start();
      return { recoverySeconds: await nextDelivery(context, restarted), violations };
    },
  },
  {
    name: 'all-kill',
    fault: 'kill -9 of the API, the worker and the Temporal dev server at once, then all started again',
    proves: 'nothing accepted lives only in a process: the database and Temporal\'s file hold it all',
    async run(context) {
      await underWay(context);
      await Promise.all([context.app.killAll(), context.temporal.kill()]);
      await sleep(2_000);
      const restarted = Date.now();
      await context.temporal.start();
      await Promise.all([context.app.start('api'), context.app.start('worker')]);
      const accept = await nextAccept(context, restarted);
      return { recoverySeconds: Math.max(accept, await nextDelivery(context, restarted)), violations: [] };
    },
  },
  {
    name: 'postgres-crash',
    fault: 'kill -9 of the PostgreSQL postmaster, restarted after 3 s; API and worker left running',
    proves: 'the API answers 503, never a 500 and never a hang, while the database is gone, clients\' retries settle on one id, and the worker\'s steps resume on their own once it is back',
    async run(context) {
      await underWay(context);
      await context.postgres.crash();
      await sleep(3_000);
      const restarted = Date.now();
      await context.postgres.start();
      const accept = await nextAccept(context, restarted);
      return { recoverySeconds: Math.max(accept, await nextDelivery(context, restarted)), violations: [] };
    },
  },
  {
    name: 'redis-down',
    fault: `Redis stopped for ${REDIS_DOWN_MS / 1_000} s under load (FAULTS_REDIS_DOWN_SECONDS, 2 minutes by default), then started again (empty)`,
    proves:
      'delivery goes on without Redis at no more than the configured rate (the worker paces locally at its share, here the whole rate: no sliding window of w s holds more than floor((w + 0.05) × rate) + 1); ' +
      'the API keeps answering and its rate limiter falls back to a per-process count (still limiting, never failing open or hanging); nothing is lost or sent twice; the shared pacer takes over once Redis is back',
    // Light enough that this 2-core machine delivers what is accepted during two minutes, so the backlog settles.
    load: { clients: 2, pauseMs: 300 },
    async run(context) {
      await underWay(context);
      const key = await context.probeKey();
      await context.redis.stop();
      const stopped = Date.now();
      const before = context.sink.deliveriesSince(stopped - 10_000).length;
      const violations: string[] = [];
      const acceptsBefore = context.load.acceptedCount();
      // As redis-outage did: the API's clients notice the loss first (a burst at once met no limit at all, on a
      // connection still closing), then its rate limiter counts per process.
      await sleep(2_500);
      const limited = await burst(context, key, context.rateLimitPerSecond + 20);
      if (limited.other.length) violations.push(`without Redis, a burst got answers other than 200/429: ${limited.other.join(',')}`);
      if (limited.limited === 0) violations.push(`without Redis, a burst over the limit was not limited at all (${limited.ok} answered 200 in ${limited.ms} ms)`);
      if (limited.ok === 0) violations.push('without Redis, the API answered no request');
      await sleep(Math.max(0, stopped + REDIS_DOWN_MS - Date.now()));
      const during = context.sink.deliveriesSince(stopped);
      if (context.load.acceptedCount() <= acceptsBefore) violations.push('no message was accepted while Redis was down');
      // Attempts that had their turn from Redis before it went may land in the first second: counted all the same.
      if (during.length === 0) violations.push('nothing was delivered while Redis was down');
      violations.push(...overRate(during, context.sendRatePerSecond));
      console.log(
        `  while Redis was down: ${during.length} deliveries in ${(REDIS_DOWN_MS / 1_000).toFixed(0)} s, at most ${maxInWindow(during, 1_000)} in 1 s ` +
          `and ${maxInWindow(during, 10_000)} in 10 s (rate ${context.sendRatePerSecond}/s); ${before} in the 10 s before Redis stopped`,
      );
      const restarted = Date.now();
      await context.redis.start();
      // Recovered when the shared pacer reserves in Redis again (its key for the email provider reappears).
      await waitFor('the shared pacer in use again', () => context.redis.has('pace:email:smtp'), RECOVERY_BOUND_MS, 100);
      return { recoverySeconds: (Date.now() - restarted) / 1000, violations };
    },
  },
  {
    name: 'redis-flush',
    fault: 'FLUSHALL of Redis under load (pacing state, rate-limit counters, caches gone at once)',
    proves: 'Redis holds nothing that is not rebuilt: sends go on, nothing is lost or sent twice',
    async run(context) {
      await underWay(context);
      const flushed = Date.now();
      context.redis.flushAll();
      await sleep(3_000);
      return { recoverySeconds: await nextDelivery(context, flushed), violations: [] };
    },
  },
  {
    name: 'provider-faults',
    fault: 'the provider refuses permanently (550) for 2 s, throttles (421) for 5 s, then is down (connections refused) for 5 s',
    proves: 'a permanent refusal (550 to DATA: the recipients refused) ends the message bounced, never sent twice nor lost; throttling and outages are retried until sent once',
    async run(context) {
      await underWay(context);
      // The refusals first: once throttling has opened the email route's breaker, only a probe reaches the
      // provider, and a 2 s window of 550s could pass without one.
      await context.sink.setMode('reject');
      await sleep(2_000);
      await context.sink.setMode('throttle');
      await sleep(5_000);
      await context.sink.setMode('down');
      await sleep(5_000);
      const violations: string[] = [];
      const restored = Date.now();
      await context.sink.setMode('accept');
      return { recoverySeconds: await nextDelivery(context, restored), violations };
    },
    bit: (figures) => (figures.failedPermanently >= 1 ? [] : ['no message was refused with 550: the scenario did not bite']),
  },
];
