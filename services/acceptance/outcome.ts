import type { Sequelize } from 'sequelize';
import type { AppError } from '../../core/errors';
import { type Plan, type PlanName, quotaExceeded, type UsagePeriod } from '../../core/plans';
import type { UsageKind } from '../../core/usage';
import type { AcceptedKey } from '../../db/repositories/message-acceptance';
import type { DroppedRecipient } from '../../db/repositories/messages';
import { usedInPeriod } from '../../db/repositories/usage';

/**
 * What became of one send: accepted (its row is written), a duplicate of the send its idempotency key
 * already names, or refused with the AppError its caller answers. A batch maps these over its items, so
 * acceptance answers each item and never throws for one.
 */
export type SendOutcome =
  | { status: 'accepted'; id: string; droppedRecipients: DroppedRecipient[] }
  | { status: 'duplicate'; id: string; bodyMismatch: boolean }
  | { status: 'failed'; error: AppError };

/** Who sends: the workspace and its plan (the key's principal). */
export interface Sender {
  workspaceId: string;
  plan: PlanName;
}

/** The plan and month a send's units are reserved in; `countAs` when they count as another kind (inbox mail). */
export type Quota = { plan: Plan; period: UsagePeriod; countAs?: UsageKind };

export const duplicateOf = (existing: AcceptedKey, hash: string): SendOutcome => ({
  status: 'duplicate',
  id: existing.id,
  bodyMismatch: existing.requestHash !== hash,
});

/** 402 `quota_exceeded` with the period's figures: the answer of every send the plan's quota refuses. */
export async function quotaRefusal(db: Sequelize, workspaceId: string, quota: Quota, units: number): Promise<AppError> {
  return quotaExceeded(quota.plan, await usedInPeriod(db, workspaceId, quota.period), units);
}
