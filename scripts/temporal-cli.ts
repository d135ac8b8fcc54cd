import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The Temporal CLI that setup provided: an override, the project's own build, or one on PATH. */
export function temporalCliPath(env: Record<string, string | undefined>): string {
  if (env.TEMPORAL_CLI_PATH) return env.TEMPORAL_CLI_PATH;
  const built = resolve(__dirname, '../.tools/bin/temporal');
  return existsSync(built) ? built : 'temporal';
}

/** Search attributes operators use to find any workflow in the Web UI (DESIGN.md). */
export const SEARCH_ATTRIBUTES = [
  'WorkspaceId',
  'MessageId',
  'CampaignId',
  'AutomationId',
  'EnrollmentId',
  'ContactId',
  'Channel',
  'Kind',
].map((name) => `${name}=Keyword`).concat(
  // The messages a batch workflow carries (temporal/search-attributes.ts).
  'MessageIds=KeywordList',
);

/**
 * Task-queue priority and fairness (docs/delivery.md): the server of Temporal CLI 1.5.1 (1.29) honours the
 * priority and fairness keys of workflow and activity tasks only on its new matcher, with fairness turned
 * on. A self-hosted cluster sets the same dynamic config; Temporal Cloud enables it per namespace.
 */
export const TASK_QUEUE_FAIRNESS = ['matching.useNewMatcher=true', 'matching.enableFairness=true'];

/** Arguments of `temporal server start-dev` for an address like 127.0.0.1:7233. */
export function devServerArgs(options: { address: string; namespace: string; dbFile?: string; uiPort?: number }): string[] {
  const [host, port] = options.address.split(':');
  const args = ['server', 'start-dev', '--ip', host, '--port', port, '--namespace', options.namespace, '--log-level', 'error'];
  args.push(...(options.dbFile ? ['--db-filename', options.dbFile] : []));
  args.push(...(options.uiPort ? ['--ui-port', String(options.uiPort)] : ['--headless']));
  for (const attribute of SEARCH_ATTRIBUTES) args.push('--search-attribute', attribute);
  for (const setting of TASK_QUEUE_FAIRNESS) args.push('--dynamic-config-value', setting);
  return args;
}
