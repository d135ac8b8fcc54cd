import { QueryTypes, type Sequelize } from 'sequelize';

export interface UnfinishedMessage {
  workspaceId: string;
  messageId: string;
  status: 'queued' | 'sending';
  /** The workflow that carries it (its own, or its batch's); null for rows dispatched before it was recorded. */
  workflowId: string | null;
}

/**
 * Dispatched messages that are still waiting and have not moved for `staleAfterMs`: the ones whose send
 * workflow may have been closed (terminated from the Temporal UI, failed by a bug) or lost. Undispatched
 * ones are the outbox's, not these.
 */
export async function findStaleUnfinished(db: Sequelize, options: { staleAfterMs: number; limit: number }): Promise<UnfinishedMessage[]> {
  const rows = await db.query<{ id: string; workspace_id: string; status: 'queued' | 'sending'; workflow_id: string | null }>(
    `SELECT id, workspace_id, status, workflow_id FROM messages
     WHERE status IN ('queued', 'sending') AND dispatched_at IS NOT NULL
       AND updated_at <= now() - make_interval(secs => $1::double precision / 1000)
       AND (reconcile_after IS NULL OR reconcile_after <= now())
     ORDER BY updated_at LIMIT $2`,
    { bind: [options.staleAfterMs, options.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, messageId: row.id, status: row.status, workflowId: row.workflow_id }));
}

/** Messages whose workflow runs: looked at again only after `ms` (a long backoff is not a fault). */
export async function postponeReconcile(db: Sequelize, messageIds: readonly string[], ms: number): Promise<void> {
  if (messageIds.length === 0) return;
  await db.query(
    `UPDATE messages SET reconcile_after = now() + make_interval(secs => $2::double precision / 1000) WHERE id = ANY($1::uuid[])`,
    { bind: [messageIds, ms] },
  );
}

/** Hands a message whose workflow is gone back to the outbox, which starts a new one. */
export async function redispatch(db: Sequelize, workspaceId: string, messageId: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE messages SET dispatched_at = NULL, dispatch_lease_until = NULL, workflow_id = NULL, reconcile_after = NULL, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'sending') RETURNING id`,
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}
