/**
 * The worker registry's timing (db/repositories/worker-registry.ts, workers/worker-registry.ts): every worker
 * writes a heartbeat this often; one whose last beat is older than three beats is not counted as live, and
 * its row is deleted after a minute.
 */
export const WORKER_BEAT_INTERVAL_MS = 5_000;
export const WORKER_LIVE_FOR_MS = 3 * WORKER_BEAT_INTERVAL_MS;
export const WORKER_FORGOTTEN_AFTER_MS = 60_000;
