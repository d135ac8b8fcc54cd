import type { Sequelize } from 'sequelize';
import { issueApiKey } from '../../api/api-keys/service';
import type { PlanName } from '../../core/plans';
import { FULL_ACCESS, type Grant } from '../../core/scopes';
import { insertWorkspace } from '../../db/repositories/workspaces';

export interface TestWorkspace {
  workspaceId: string;
  apiKey: string;
  keyId: string;
}

/** A fresh workspace with one key, so tests never share state and never need to clean up. */
export async function createWorkspace(
  db: Sequelize,
  options: { plan?: PlanName; scopes?: Grant[]; name?: string } = {},
): Promise<TestWorkspace> {
  const workspace = await insertWorkspace(db, { name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const key = await issueApiKey(db, workspace.id, { name: 'test', scopes: options.scopes ?? [FULL_ACCESS] });
  return { workspaceId: workspace.id, apiKey: key.secret, keyId: key.record.id };
}

export async function createKey(db: Sequelize, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string }> {
  const key = await issueApiKey(db, workspaceId, { name: 'test', scopes });
  return { apiKey: key.secret, keyId: key.record.id };
}
