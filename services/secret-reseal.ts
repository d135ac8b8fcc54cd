import type { Sequelize } from 'sequelize';
import { currentSealPrefix, type Keyring, resealSecret, sealContextOf } from '../core/secrets';
import { findValuesToReseal, replaceSealedValues, SEALED_COLUMNS, type SealedColumnSpec, type SealedValue } from '../db/repositories/sealed-secrets';

/** What `secrets:reseal` did to one column. */
export interface ResealReport {
  column: string;
  /** Values that were under another key, or in the old format, and are now under the current key. */
  resealed: number;
  /** Values changed through the API while the command ran: already under the current key. */
  changedMeanwhile: number;
  /** Values no key of the ring opens (a key missing from MASTER_KEY_PREVIOUS, or a value moved or damaged). */
  failed: Array<{ workspaceId: string; rowKey: string; error: string }>;
}

export interface ResealOptions {
  /** Rows read and written per round trip. */
  batchSize: number;
  /** Counts what would be re-sealed (and what would fail to open), writing nothing. */
  dryRun?: boolean;
  onBatch?: (column: string, done: number) => void;
}

/**
 * Re-seals every sealed value of every workspace under the current MASTER_KEY (README, "Rotating
 * MASTER_KEY"): values under a previous key and values of the old, unbound format (this is how they are
 * migrated: they open as before until this runs). Idempotent: a value already under the current key is
 * never read, so a second run, or a run after an interruption, does only what is left. Once it reports no
 * failure, the previous key can leave MASTER_KEY_PREVIOUS as far as sealed secrets are concerned.
 */
export async function resealSecrets(db: Sequelize, keyring: Keyring, options: ResealOptions): Promise<ResealReport[]> {
  const reports: ResealReport[] = [];
  for (const spec of SEALED_COLUMNS) reports.push(await resealColumn(db, keyring, spec, options));
  return reports;
}

async function resealColumn(db: Sequelize, keyring: Keyring, spec: SealedColumnSpec, options: ResealOptions): Promise<ResealReport> {
  const report: ResealReport = { column: `${spec.table}.${spec.column}`, resealed: 0, changedMeanwhile: 0, failed: [] };
  const prefix = currentSealPrefix(keyring);
  // Values that fail stay behind the cursor, so a batch never reads them twice.
  let after: string | null = null;
  for (;;) {
    const batch = await findValuesToReseal(db, spec, prefix, after, options.batchSize);
    const changes: Array<{ value: SealedValue; resealed: string }> = [];
    for (const value of batch) {
      try {
        changes.push({ value, resealed: resealSecret(keyring, sealContextOf(value.workspaceId, spec.context, value.row), value.sealed) });
      } catch (error) {
        report.failed.push({ workspaceId: value.workspaceId, rowKey: value.rowKey, error: error instanceof Error ? error.message : String(error) });
      }
    }
    // One statement per batch: a round trip and a commit per row made 5,000 DKIM keys take 27 s.
    const written = options.dryRun ? changes.length : await replaceSealedValues(db, spec, changes);
    report.resealed += written;
    report.changedMeanwhile += changes.length - written;
    options.onBatch?.(report.column, report.resealed);
    if (batch.length < options.batchSize) return report;
    after = batch[batch.length - 1].rowKey;
  }
}
