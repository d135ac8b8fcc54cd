import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { PlanName } from '../../core/plans';

export interface Workspace {
  id: string;
  name: string;
  plan: PlanName;
  createdAt: Date;
}

interface WorkspaceRow {
  id: string;
  name: string;
  plan: PlanName;
  created_at: Date;
}

const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  createdAt: row.created_at,
});

/** `timezone` (IANA): the zone of contacts without one of their own, for campaigns sent at a local time. */
export async function insertWorkspace(db: Sequelize, input: { name: string; plan: PlanName; timezone?: string }): Promise<Workspace> {
  const rows = await db.query<WorkspaceRow>(
    'INSERT INTO workspaces (id, name, plan, timezone) VALUES ($1, $2, $3, $4) RETURNING *',
    { bind: [randomUUID(), input.name, input.plan, input.timezone ?? 'UTC'], type: QueryTypes.SELECT },
  );
  return toWorkspace(rows[0]);
}

export async function findWorkspace(db: Sequelize, workspaceId: string): Promise<Workspace | null> {
  const rows = await db.query<WorkspaceRow>('SELECT * FROM workspaces WHERE id = $1', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toWorkspace(rows[0]) : null;
}
