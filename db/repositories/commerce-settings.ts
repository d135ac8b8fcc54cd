import { QueryTypes, type Sequelize } from 'sequelize';

/** Sets the workspace's attribution window (1 to 90 days, the column's check); later orders use it. */
export async function saveAttributionWindow(db: Sequelize, workspaceId: string, days: number): Promise<number> {
  const rows = await db.query<{ days: number }>(
    `INSERT INTO commerce_settings (workspace_id, attribution_window_days) VALUES ($1, $2)
     ON CONFLICT (workspace_id) DO UPDATE SET attribution_window_days = EXCLUDED.attribution_window_days, updated_at = now()
     RETURNING attribution_window_days AS days`,
    { bind: [workspaceId, days], type: QueryTypes.SELECT },
  );
  return rows[0].days;
}
