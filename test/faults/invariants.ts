import { QueryTypes, type Sequelize } from 'sequelize';
import type { Application } from './application';
import type { CountingSink } from './counting-sink';
import type { LoadRecord } from './load';
import { sleep } from './processes';

/**
 * The invariant checker: after a fault, reads the suite's database, the sink's counts and the worker's
 * unknown-outcome counter, and proves the send path kept its promises for every message the clients were
 * told was accepted.
 */

const END_STATES = ['sent', 'delivered', 'bounced', 'complained', 'failed', 'canceled'];

export interface Figures {
  accepted: number;
  /** Accepted and reached the provider exactly once. */
  deliveredOnce: number;
  /** Accepted and reached the provider more than once (each must be in the counted window). */
  deliveredMoreThanOnce: number;
  /**
   * Ended `failed` or `bounced` after the provider refused them permanently (550): the expected end, never
   * sent. A 550 to DATA refuses the recipients, so the message bounces (docs/emails.md, Bounces and complaints).
   */
  failedPermanently: number;
  /** Accepted and never reached the provider, nor ended failed with a reason: must be 0. */
  lost: number;
  /** Deliveries beyond the first: inside the counted ambiguous window, and outside it (must be 0). */
  duplicatedCounted: number;
  duplicatedUncounted: number;
  /** How much `messaging_delivery_outcome_unknown_total` grew during the scenario. */
  unknownOutcomeCounter: number;
  /** Seconds from the end of the load until every accepted message was in an end state. */
  settleSeconds: number;
  hungRequests: number;
  /** Retries answered 200 duplicate with the id of the first request (its answer was lost to the fault). */
  answeredDuplicate: number;
}

export interface Verdict {
  figures: Figures;
  violations: string[];
}

interface Row {
  id: string;
  workspace_id: string;
  status: string;
  quota_units: number;
  sent_events: number;
  failed_events: number;
  failed_reason: string | null;
}

async function readMessages(db: Sequelize, ids: string[]): Promise<Row[]> {
  return db.query<Row>(
    `SELECT m.id, m.workspace_id, m.status, m.quota_units,
       (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.type = 'sent') AS sent_events,
       (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.type = 'failed') AS failed_events,
       (SELECT e.reason FROM message_events e WHERE e.message_id = m.id AND e.type = 'failed' LIMIT 1) AS failed_reason
     FROM messages m WHERE m.id = ANY($1::uuid[])`,
    { bind: [ids], type: QueryTypes.SELECT },
  );
}

/** Waits until every accepted message is in an end state, or the bound passes (the rest are reported stuck). */
async function settle(db: Sequelize, ids: string[], boundMs: number): Promise<{ rows: Row[]; seconds: number }> {
  const started = Date.now();
  for (;;) {
    let rows: Row[] | null = null;
    try {
      rows = await readMessages(db, ids);
    } catch {
      // The suite's own connection may still be reconnecting after a PostgreSQL crash.
    }
    const settled = rows !== null && rows.length === ids.length && rows.every((row) => END_STATES.includes(row.status));
    if (rows && (settled || Date.now() - started > boundMs)) return { rows, seconds: (Date.now() - started) / 1000 };
    await sleep(500);
  }
}

export async function checkInvariants(input: {
  db: Sequelize;
  sink: CountingSink;
  app: Application;
  record: LoadRecord;
  workspaceIds: string[];
  /** How long accepted messages may take to reach an end state once the fault is over. */
  settleBoundMs: number;
  /** The unknown-outcome counter when the scenario began (the counter covers the whole run). */
  counterBefore: number;
}): Promise<Verdict> {
  const { db, sink, app, record } = input;
  const violations: string[] = [];
  const ids = [...record.accepted.keys()];
  const sample = (list: string[]) => `${list.length} (${list.slice(0, 3).join(', ')}${list.length > 3 ? ', ...' : ''})`;

  for (const [key, answered] of record.idsByKey) if (answered.size > 1) violations.push(`key ${key} answered with ${answered.size} ids: ${[...answered].join(', ')}`);
  if (record.hung) violations.push(`${record.hung} requests hung (no answer and no connection error within the timeout)`);
  if (record.unanswered.length) violations.push(`keys never answered: ${sample(record.unanswered)}`);
  for (const body of record.unexpected) violations.push(`unexpected answer: ${body}`);
  // A fault of a dependency is a 503 (try again) at worst; a 500 says the service itself broke.
  const internalErrors = record.statuses.get('500') ?? 0;
  if (internalErrors) violations.push(`${internalErrors} requests answered 500`);

  const { rows, seconds } = await settle(db, ids, input.settleBoundMs);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length) violations.push(`accepted but not stored: ${sample(missing)}`);
  const stuck = rows.filter((row) => !END_STATES.includes(row.status));
  if (stuck.length) violations.push(`not in an end state after ${input.settleBoundMs / 1000} s: ${sample(stuck.map((row) => `${row.id}=${row.status}`))}`);

  const ambiguousCounter = (await app.unknownOutcomeTotal()) - input.counterBefore;
  let deliveredOnce = 0;
  let deliveredMoreThanOnce = 0;
  let failedPermanently = 0;
  let duplicatedCounted = 0;
  let duplicatedUncounted = 0;
  const lost: string[] = [];
  for (const row of rows) {
    const deliveries = sink.deliveries.get(row.id) ?? 0;
    const refusedPermanently = (sink.refusals.get(row.id) ?? []).includes(550);
    if (row.workspace_id !== record.accepted.get(row.id)) violations.push(`message ${row.id} stored in another workspace`);
    if (row.status === 'failed') {
      if (deliveries > 0) violations.push(`message ${row.id} failed but reached the provider ${deliveries}x`);
      else if (refusedPermanently) failedPermanently += 1;
      else lost.push(`${row.id} (failed: ${row.failed_reason})`);
      if (row.failed_events !== 1 || row.sent_events !== 0) violations.push(`message ${row.id} failed with ${row.failed_events} failed and ${row.sent_events} sent events`);
      continue;
    }
    if (!END_STATES.includes(row.status)) continue;
    if (row.status === 'bounced' && deliveries === 0 && refusedPermanently) {
      failedPermanently += 1;
      continue;
    }
    if (deliveries === 0) lost.push(`${row.id} (${row.status}, never reached the provider)`);
    else if (deliveries === 1) deliveredOnce += 1;
    if (deliveries > 1) {
      deliveredMoreThanOnce += 1;
      if (app.ambiguous.has(row.id)) duplicatedCounted += deliveries - 1;
      else duplicatedUncounted += deliveries - 1;
    }
    if (row.sent_events !== 1 || row.failed_events !== 0) violations.push(`message ${row.id} ${row.status} with ${row.sent_events} sent and ${row.failed_events} failed events`);
  }
  if (lost.length) violations.push(`lost: ${sample(lost)}`);
  if (duplicatedUncounted) violations.push(`${duplicatedUncounted} duplicate deliveries outside the counted ambiguous window`);
  if (duplicatedCounted > ambiguousCounter) violations.push(`${duplicatedCounted} counted duplicates but messaging_delivery_outcome_unknown_total is ${ambiguousCounter}`);

  // No row was stored (and so perhaps sent) that no client was told about: clients retry until answered.
  const ours = await db.query<{ id: string }>('SELECT id FROM messages WHERE workspace_id = ANY($1::uuid[])', { bind: [input.workspaceIds], type: QueryTypes.SELECT });
  const unseen = ours.filter((row) => !record.accepted.has(row.id)).map((row) => row.id);
  if (unseen.length) violations.push(`stored but never answered to a client: ${sample(unseen)}`);

  // The quota ledger holds one unit per accepted recipient, given back for each message that failed.
  const ledger = await db.query<{ workspace_id: string; used: string; owed: string }>(
    `SELECT w.id AS workspace_id, COALESCE((SELECT sum(used) FROM usage_counters c WHERE c.workspace_id = w.id), 0) AS used,
       COALESCE((SELECT sum(quota_units) FROM messages m WHERE m.workspace_id = w.id AND m.status NOT IN ('failed', 'canceled')), 0) AS owed
     FROM workspaces w WHERE w.id = ANY($1::uuid[])`,
    { bind: [input.workspaceIds], type: QueryTypes.SELECT },
  );
  for (const row of ledger) if (Number(row.used) !== Number(row.owed)) violations.push(`workspace ${row.workspace_id}: quota ledger ${row.used}, accepted and not failed ${row.owed}`);
  // Where the units went (usage_daily, GET /usage's byChannel, byKind and daily) adds up to the ledger, moved with it.
  const days = await db.query<{ workspace_id: string; used: string; days: string }>(
    `SELECT w.id AS workspace_id, COALESCE((SELECT sum(used) FROM usage_counters c WHERE c.workspace_id = w.id), 0) AS used,
       COALESCE((SELECT sum(messages) FROM usage_daily d WHERE d.workspace_id = w.id), 0) AS days
     FROM workspaces w WHERE w.id = ANY($1::uuid[])`,
    { bind: [input.workspaceIds], type: QueryTypes.SELECT },
  );
  for (const row of days) if (Number(row.used) !== Number(row.days)) violations.push(`workspace ${row.workspace_id}: quota ledger ${row.used}, its days ${row.days}`);
  const notFailed = rows.filter((row) => row.status !== 'failed').reduce((sum, row) => sum + row.quota_units, 0);
  const ledgerTotal = ledger.reduce((sum, row) => sum + Number(row.used), 0);
  if (ledgerTotal !== notFailed) violations.push(`quota ledger ${ledgerTotal} units, accepted and not failed ${notFailed}`);
  // Every send of the load has one recipient: one unit each, as the clients were told.
  const acceptedNotFailed = rows.filter((row) => row.status !== 'failed').length;
  if (ledgerTotal !== acceptedNotFailed) violations.push(`quota ledger ${ledgerTotal} units for ${acceptedNotFailed} accepted one-recipient sends that did not fail`);

  return {
    figures: {
      accepted: ids.length,
      deliveredOnce,
      deliveredMoreThanOnce,
      failedPermanently,
      lost: lost.length,
      duplicatedCounted,
      duplicatedUncounted,
      unknownOutcomeCounter: ambiguousCounter,
      settleSeconds: Math.round(seconds * 10) / 10,
      hungRequests: record.hung,
      answeredDuplicate: record.statuses.get('200') ?? 0,
    },
    violations,
  };
}
