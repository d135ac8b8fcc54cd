import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * The inbound-mail workflow's outbox: rows the listener accepted (`received`) whose workflow is not known to
 * run (`workflow_started_at` null). The listener starts each workflow right after its 250 and marks it; the
 * inbound dispatcher starts what that missed.
 */

/** The workflow's outbox: accepted rows whose workflow is not known to run, older than `olderThan` (inbox_messages_unstarted_idx). */
export async function claimUnstartedInbound(
  db: Sequelize,
  page: { olderThan: Date; limit: number },
  transaction: Transaction,
): Promise<Array<{ id: string; workspaceId: string; inboxId: string }>> {
  return db.query(
    // SKIP LOCKED: two drains (one per worker) split the rows instead of starting the same ones.
    `SELECT id, workspace_id AS "workspaceId", inbox_id AS "inboxId" FROM inbox_messages
      WHERE status = 'received' AND workflow_started_at IS NULL AND created_at < $1
      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    { bind: [page.olderThan, page.limit], type: QueryTypes.SELECT, transaction },
  );
}

/** These rows' workflows run: they leave the outbox. */
export async function markInboundStarted(db: Sequelize, ids: readonly string[], transaction?: Transaction): Promise<void> {
  if (!ids.length) return;
  await db.query('UPDATE inbox_messages SET workflow_started_at = now() WHERE id = ANY ($1::uuid[]) AND workflow_started_at IS NULL', { bind: [ids], transaction });
}

