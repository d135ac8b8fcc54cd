import { log } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { parseReport } from '../core/bounces/reports';
import type { ReturnPathTokens } from '../core/bounces/return-path';
import type { BlobStore } from '../db/blob-store';
import type { Suppress } from '../db/repositories/provider-events';
import { recordReturnPathReport, type ReportOutcome } from './bounce-events';
import { readReportMail } from './bounce-reports';

export interface BounceMailDeps {
  db: Sequelize;
  blobs: BlobStore;
  tokens: ReturnPathTokens;
  suppress: Suppress;
  /** The largest mail the listener accepts: nothing larger is read back. */
  maxMessageBytes: number;
}

/** A report mail the MX accepted for a VERP return path, stored in the blob store under `blobKey`. */
export interface BounceMailInput {
  blobKey: string;
  /** The token of the return path it was sent to (its MAC was checked at RCPT, and is again here). */
  token: string;
  /** The mail's digest: the event's notification id, so a redelivered report records nothing new. */
  digest: string;
}

export type BounceMailOutcome = ReportOutcome | 'missing' | 'bad-token';

export function createBounceMailActivities(deps: BounceMailDeps) {
  return {
    /**
     * Reads the report (DSN, ARF or a plain-text bounce) and records what it says about the token's
     * recipient. Idempotent: the event is stored once per digest, and the mail is deleted only after.
     */
    async processBounceMail(input: BounceMailInput): Promise<BounceMailOutcome> {
      const claims = deps.tokens.read(input.token);
      if (!claims) return 'bad-token';
      const raw = await deps.blobs.get(input.blobKey, deps.maxMessageBytes);
      if (!raw) return 'missing';
      const report = parseReport(await readReportMail(raw));
      const outcome = await recordReturnPathReport(deps.db, deps.suppress, claims, report, `return-path:${input.digest}`);
      log.info('bounce mail processed', { messageId: claims.messageId, kind: report.kind, outcome });
      await deps.blobs.delete(input.blobKey);
      return outcome;
    },
  };
}

export type BounceMailActivities = ReturnType<typeof createBounceMailActivities>;
