import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * The circuit breakers of the provider routes (migration 0034), shared by every worker. A route opens after
 * `threshold` consecutive provider-level failures (whoever saw them), stays open until a probe succeeds,
 * and lets the dispatcher through with one probe per interval meanwhile.
 */

export interface BreakerState {
  route: string;
  open: boolean;
  failures: number;
  openedAt: Date | null;
}

type BreakerRow = { route: string; state: 'closed' | 'open'; failures: number; opened_at: Date | null };

const toState = (row: BreakerRow): BreakerState => ({ route: row.route, open: row.state === 'open', failures: row.failures, openedAt: row.opened_at });

export async function findBreaker(db: Sequelize, route: string): Promise<BreakerState> {
  const rows = await db.query<BreakerRow>('SELECT route, state, failures, opened_at FROM provider_breakers WHERE route = $1', {
    bind: [route],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toState(rows[0]) : { route, open: false, failures: 0, openedAt: null };
}

/** The routes open now: what the dispatcher keeps in the outbox. */
export async function findOpenBreakers(db: Sequelize): Promise<BreakerState[]> {
  const rows = await db.query<BreakerRow>("SELECT route, state, failures, opened_at FROM provider_breakers WHERE state = 'open'", { type: QueryTypes.SELECT });
  return rows.map(toState);
}

/**
 * Counts one provider-level failure; the route opens when the count reaches `threshold`. `opened` is true
 * for the one call that opened it (the caller logs it once). A failure while open (a failed probe) keeps it
 * open and its opening time.
 */
export async function recordBreakerFailure(db: Sequelize, route: string, threshold: number, error: string): Promise<BreakerState & { opened: boolean }> {
  const rows = await db.query<BreakerRow & { opened: boolean }>(
    `INSERT INTO provider_breakers AS b (route, state, failures, opened_at, last_error, updated_at)
     VALUES ($1, CASE WHEN $2::int <= 1 THEN 'open' ELSE 'closed' END, 1, CASE WHEN $2::int <= 1 THEN now() END, $3, now())
     ON CONFLICT (route) DO UPDATE SET
       failures = b.failures + 1,
       state = CASE WHEN b.failures + 1 >= $2::int THEN 'open' ELSE b.state END,
       opened_at = CASE WHEN b.state = 'open' THEN b.opened_at WHEN b.failures + 1 >= $2::int THEN now() END,
       last_error = $3, updated_at = now()
     RETURNING b.route, b.state, b.failures, b.opened_at, b.opened_at IS NOT NULL AND b.opened_at = now() AS opened`,
    { bind: [route, threshold, error.slice(0, 500)], type: QueryTypes.SELECT },
  );
  return { ...toState(rows[0]), opened: rows[0].opened };
}

/** A success: the route closes and its count starts again. Returns whether it was open (the caller logs it once). */
export async function recordBreakerSuccess(db: Sequelize, route: string): Promise<boolean> {
  const rows = await db.query<{ was_open: boolean }>(
    `UPDATE provider_breakers b SET state = 'closed', failures = 0, opened_at = NULL, probe_at = NULL, updated_at = now()
     FROM (SELECT route, state FROM provider_breakers WHERE route = $1 FOR UPDATE) old
     WHERE b.route = old.route AND (b.failures > 0 OR b.state = 'open')
     RETURNING old.state = 'open' AS was_open`,
    { bind: [route], type: QueryTypes.SELECT },
  );
  return rows[0]?.was_open ?? false;
}

/**
 * Takes the route's next probe turn: true for exactly one caller per `intervalMs` while the route is open
 * (every worker's dispatcher asks; the row decides), which then lets one message through.
 */
export async function takeProbeTurn(db: Sequelize, route: string, intervalMs: number): Promise<boolean> {
  const rows = await db.query<{ route: string }>(
    `UPDATE provider_breakers SET probe_at = now()
     WHERE route = $1 AND state = 'open' AND (probe_at IS NULL OR probe_at <= now() - make_interval(secs => $2::double precision / 1000))
     RETURNING route`,
    { bind: [route, intervalMs], type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}
