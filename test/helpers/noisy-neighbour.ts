import type { Sequelize } from 'sequelize';
import { FULL_ACCESS } from '../../core/scopes';
import { createTestKey, createTestWorkspace } from './workspaces';

/**
 * A workspace that floods the shared capacity (issue 29's measurement, used by the noisy-neighbour test and
 * benchmark): many contacts seeded in SQL, several keys, and the audience queries that cost the most to
 * answer, a segment preview of `contains` conditions and a campaign estimate over the same segment.
 */
export interface Flooder {
  workspaceId: string;
  keys: string[];
  segmentId: string;
  campaignId: string;
}

/** `count` contacts with a first name and a primary email each, in two statements. */
export async function seedContacts(db: Sequelize, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO contacts (id, workspace_id, attributes, created_at, updated_at)
     SELECT gen_random_uuid(), $1, jsonb_build_object('firstName', 'First' || g, 'city', (ARRAY['Paris','Berlin','London'])[1 + g % 3]),
       now() - (g % 1000) * interval '1 hour', now()
     FROM generate_series(1, $2::int) AS g`,
    { bind: [workspaceId, count] },
  );
  await db.query(
    `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, verified, is_primary)
     SELECT $1, 'email', 'user' || n || '-' || left($1::text, 8) || '@example.com', id, 'opted_in', true, true
     FROM (SELECT id, row_number() OVER () AS n FROM contacts WHERE workspace_id = $1) numbered`,
    { bind: [workspaceId] },
  );
  await db.query('ANALYZE contacts, contact_identities');
}

/** `conditions` case-insensitive substring tests on an attribute, any of which matches: no index helps. */
export function containsRules(conditions: number) {
  return {
    operator: 'or',
    rules: Array.from({ length: conditions }, (_, i) => ({ type: 'attribute', key: 'firstName', operator: 'contains', value: `zz${i}q` })),
  };
}

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

/**
 * A workspace of `contacts` contacts with `keys` keys (the first the workspace's own), a segment of
 * `conditions` contains-conditions and a draft campaign to it, ready to flood previews and estimates.
 */
export async function createFlooder(
  db: Sequelize,
  masterKey: string,
  as: (key: string) => Call,
  options: { contacts: number; keys: number; conditions: number },
): Promise<Flooder> {
  const workspace = await createTestWorkspace(db, { plan: 'pro', name: 'Flooder', domain: { masterKey } });
  const keys = [workspace.apiKey];
  for (let i = 1; i < options.keys; i += 1) keys.push((await createTestKey(db, workspace.workspaceId, [FULL_ACCESS])).apiKey);
  await seedContacts(db, workspace.workspaceId, options.contacts);
  const call = as(workspace.apiKey);
  const segment = await call('POST', '/segments', { name: 'Needles', definition: containsRules(options.conditions) });
  if (segment.status !== 201) throw new Error(`segment: ${segment.status} ${JSON.stringify(segment.body)}`);
  const segmentId = (segment.body as { id: string }).id;
  const campaign = await call('POST', '/campaigns', { name: 'Flood', fromAddress: `news@${workspace.domain}`, segmentId, subject: 'S', html: '<p>x</p>' });
  if (campaign.status !== 201) throw new Error(`campaign: ${campaign.status} ${JSON.stringify(campaign.body)}`);
  return { workspaceId: workspace.workspaceId, keys, segmentId, campaignId: (campaign.body as { id: string }).id };
}

export interface Answer {
  status: number;
  retryAfter: string | null;
  body: unknown;
  ms: number;
}

/** After a refusal the flood comes back this soon: far sooner than Retry-After says, but without spinning. */
const RETRY_AFTER_REFUSAL_MS = 100;

/**
 * Every key sends previews and estimates back to back (alternating) until `stop()`: what the measured flood
 * did. Returns every answer.
 */
export async function flood(flooder: Flooder, call: (key: string, method: string, path: string, body?: unknown) => Promise<Answer>, stop: () => boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  const preview = { definition: containsRules(40) };
  await Promise.all(
    flooder.keys.map(async (key, index) => {
      for (let i = index; !stop(); i += 1) {
        const answer = i % 2 === 0 ? await call(key, 'POST', '/segments/preview', preview) : await call(key, 'POST', `/campaigns/${flooder.campaignId}/estimate`);
        answers.push(answer);
        if (answer.status === 429) await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_REFUSAL_MS));
      }
    }),
  );
  return answers;
}

/** A timed call under /api/v1 against the API at `url`. */
export function timedCaller(url: string) {
  return async (key: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const started = performance.now();
    const response = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (a proxy's error page): keep the text
    }
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: parsed, ms: performance.now() - started };
  };
}
