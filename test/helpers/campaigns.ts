import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Consent } from '../../core/identities';
import type { ApiResponse } from './api-harness';

export interface SeededContact {
  id: string;
  address: string;
}

/**
 * Contacts with one primary email identity each (`<prefix>-<i>@example.org`), added to the list when one
 * is given, written in SQL: what an import would leave, without the API's rate limit in the way.
 */
export async function seedContacts(
  db: Sequelize,
  workspaceId: string,
  options: { count: number; prefix: string; listId?: string; consent?: Consent; attributes?: (i: number) => Record<string, unknown> },
): Promise<SeededContact[]> {
  const contacts = Array.from({ length: options.count }, (_, i) => ({ id: randomUUID(), address: `${options.prefix}-${i}@example.org`, attributes: options.attributes?.(i) ?? {} }));
  await db.query('INSERT INTO contacts (id, workspace_id, attributes) SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::jsonb[])', {
    bind: [contacts.map((c) => c.id), contacts.map(() => workspaceId), contacts.map((c) => JSON.stringify(c.attributes))],
  });
  await db.query(
    `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, is_primary)
     SELECT $1, 'email', address, contact_id, $4, true FROM unnest($2::text[], $3::uuid[]) AS i (address, contact_id)`,
    { bind: [workspaceId, contacts.map((c) => c.address), contacts.map((c) => c.id), options.consent ?? 'opted_in'] },
  );
  if (options.listId) {
    await db.query('INSERT INTO list_members (workspace_id, list_id, contact_id) SELECT $1, $2, unnest($3::uuid[])', {
      bind: [workspaceId, options.listId, contacts.map((c) => c.id)],
    });
  }
  return contacts.map(({ id, address }) => ({ id, address }));
}

/** Makes a list through the API; returns its id. */
export async function createList(call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>, name = `list-${randomUUID()}`): Promise<string> {
  const response = await call('POST', '/lists', { name });
  return (response.body as { id: string }).id;
}

/** Estimates the campaign and sends it now with the token the estimate gave. */
export async function sendNow(call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>, campaignId: string): Promise<ApiResponse> {
  const estimate = await call('POST', `/campaigns/${campaignId}/estimate`);
  if (estimate.status !== 200) throw new Error(`estimate answered ${estimate.status} ${JSON.stringify(estimate.body)}`);
  return call('POST', `/campaigns/${campaignId}/send`, { confirmationToken: (estimate.body as { confirmationToken: string }).confirmationToken });
}

/** Waits until the campaign reaches one of these statuses; returns its detail. */
export async function waitForCampaign(
  call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>,
  campaignId: string,
  statuses: string[],
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    body = (await call('GET', `/campaigns/${campaignId}`)).body as Record<string, unknown>;
    if (statuses.includes(body.status as string)) return body;
  }
  throw new Error(`campaign ${campaignId} stayed ${String(body.status)}, never ${statuses.join('/')}`);
}

/** The campaign's messages by status. */
export async function messageStatuses(db: Sequelize, workspaceId: string, campaignId: string): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM messages WHERE workspace_id = $1 AND campaign_id = $2 GROUP BY status',
    { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
  );
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}
