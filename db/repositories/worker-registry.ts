import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Live worker processes (migration 0035), a platform table rather than a workspace's: no workspace id.
 * Times are the database's, so workers with skewed clocks agree on who is live.
 */

/** Writes this worker's heartbeat, its row made on the first one. */
export async function beatWorker(db: Sequelize, worker: { id: string; host: string; pid: number }): Promise<void> {
  await db.query(
    `INSERT INTO worker_processes (id, host, pid) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET beat_at = now()`,
    { bind: [worker.id, worker.host, worker.pid] },
  );
}

/** Workers whose last beat is younger than `liveForMs`. */
export async function countLiveWorkers(db: Sequelize, liveForMs: number): Promise<number> {
  const [row] = await db.query<{ live: string }>(
    'SELECT count(*) AS live FROM worker_processes WHERE beat_at > now() - make_interval(secs => $1::double precision / 1000)',
    { bind: [liveForMs], type: QueryTypes.SELECT },
  );
  return Number(row.live);
}

/** Deletes the rows of workers that stopped beating `afterMs` ago (killed, not stopped); answers how many. */
export async function forgetDeadWorkers(db: Sequelize, afterMs: number): Promise<number> {
  const deleted = await db.query(
    'DELETE FROM worker_processes WHERE beat_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING id',
    { bind: [afterMs], type: QueryTypes.SELECT },
  );
  return deleted.length;
}

/** A worker that stops cleanly leaves at once, so the others' shares grow at their next refresh. */
export async function removeWorker(db: Sequelize, id: string): Promise<void> {
  await db.query('DELETE FROM worker_processes WHERE id = $1', { bind: [id] });
}
