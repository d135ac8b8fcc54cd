import { QueryTypes } from 'sequelize';
import type { Rule } from '../../core/audience-rules';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { evaluate, type ModelContact, type ModelField, seededRandom } from '../helpers/audience-model';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * Segment results for every operator, checked against a brute-force evaluation of the same rules: a few
 * hundred random contacts in a fresh workspace, each rule counted and listed through the API and
 * evaluated in plain TypeScript over the contacts as the API returns them.
 */
const CONTACTS = 300;
const DAY = 86_400_000;
const NOW = Date.now();
const random = seededRandom(20_261_122);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
const chance = (p: number) => random() < p;
const daysAgo = (days: number) => new Date(NOW - days * DAY - 30 * 60_000);

const FIELDS: Record<string, ModelField & { options?: string[] }> = {
  plan: { type: 'select', options: ['free', 'pro', 'team'] },
  score: { type: 'number' },
  vip: { type: 'boolean' },
  signupDate: { type: 'date' },
  interests: { type: 'multiselect', options: ['news', 'sports', 'tech', 'music'] },
  city: { type: 'text' },
};

function randomAttributes(): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  if (chance(0.85)) attributes.plan = pick(['free', 'pro', 'team']);
  if (chance(0.85)) attributes.score = pick([Math.floor(random() * 100), 10, 20, 30, 50, -5, 42.5]);
  if (chance(0.7)) attributes.vip = chance(0.3);
  if (chance(0.8)) attributes.signupDate = chance(0.5) ? daysAgo(Math.floor(random() * 400)).toISOString().slice(0, 10) : daysAgo(random() * 400).toISOString();
  if (chance(0.75)) attributes.interests = ['news', 'sports', 'tech', 'music'].filter(() => chance(0.4));
  if (chance(0.8)) attributes.city = pick(['Paris', 'paris', 'Berlin', 'New York', 'Newark', 'Lyon']);
  if (chance(0.5)) attributes.nickname = pick(['bob', 'Bobby', 'zoe', 'al', '']);
  if (chance(0.6)) attributes.age = pick([18, 25, 30, 41, '30', 'thirty', true]);
  if (chance(0.2)) attributes.profile = { nested: pick(['x', 'y']) };
  // Every JSON type under one key, so number comparisons must exclude the others exactly.
  if (chance(0.9)) attributes.misc = pick([[], [1], {}, { a: 1 }, 7, 3, -2, 12, '7', '', false, true]);
  return attributes;
}

function randomIdentities(index: number) {
  const consent = () => pick(['unknown', 'opted_in', 'opted_out']);
  const identities: Array<Record<string, unknown>> = [{ channel: 'email', address: `person${index}@example.com`, consent: consent(), verified: chance(0.5) }];
  if (chance(0.2)) identities.push({ channel: 'email', address: `alt${index}@example.org`, consent: consent() });
  if (chance(0.4)) identities.push({ channel: 'whatsapp', address: `+1415555${String(1000 + index).padStart(4, '0')}`, consent: consent(), verified: chance(0.5) });
  if (chance(0.2)) identities.push({ channel: 'telegram', address: String(100_000 + index), consent: consent(), verified: chance(0.5) });
  return identities;
}

describe('segment results match a brute-force evaluation', () => {
  let api: ApiHarness;
  let key: string;
  const model: ModelContact[] = [];
  const tagIds: string[] = [];
  const listIds: string[] = [];
  const call = (method: string, path: string, body?: unknown) => api.as(key)(method, path, body);

  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '100000' });
    const workspace = await createTestWorkspace(api);
    key = workspace.apiKey;
    for (const [fieldKey, field] of Object.entries(FIELDS)) {
      await call('POST', '/custom-fields', { key: fieldKey, label: fieldKey, type: field.type, options: field.options });
    }
    for (const name of ['gold', 'silver', 'bronze']) tagIds.push(((await call('POST', '/tags', { name })).body as { id: string }).id);
    for (const name of ['newsletter', 'beta']) listIds.push(((await call('POST', '/lists', { name })).body as { id: string }).id);

    const ids: string[] = [];
    for (let index = 0; index < CONTACTS; index += 1) {
      const upserted = await call('POST', '/contacts', { identities: randomIdentities(index), attributes: randomAttributes() });
      if (upserted.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(upserted.body)}`);
      ids.push((upserted.body as { id: string }).id);
    }
    const events: Array<[string, string, Date, string]> = [];
    for (const id of ids) {
      const tags = tagIds.filter(() => chance(0.35));
      if (tags.length) await call('POST', `/contacts/${id}/tags`, { tags });
      for (const name of ['purchase', 'visit']) {
        for (let n = Math.floor(random() * 5); n > 0; n -= 1) {
          events.push([id, name, new Date(NOW - Math.floor(random() * 90 * 24) * 3_600_000 - 30 * 60_000), JSON.stringify({ plan: pick(['pro', 'free']) })]);
        }
      }
    }
    for (const listId of listIds) await call('POST', `/lists/${listId}/contacts`, { contactIds: ids.filter(() => chance(0.4)) });
    // Creation times spread over a year (ms precision, as the API shows them), and behavioural events,
    // which have no API yet, are written straight to the tables.
    await api.db.query(
      `UPDATE contacts c SET created_at = spread.at FROM unnest($1::uuid[], $2::timestamptz[]) AS spread (id, at) WHERE c.id = spread.id`,
      { bind: [ids, ids.map(() => daysAgo(random() * 365))] },
    );
    await api.db.query(
      `INSERT INTO contact_events (id, workspace_id, contact_id, name, occurred_at, properties)
       SELECT gen_random_uuid(), $1, e.contact_id, e.name, e.at, e.properties::jsonb
       FROM unnest($2::uuid[], $3::text[], $4::timestamptz[], $5::text[]) AS e (contact_id, name, at, properties)`,
      { bind: [workspace.workspaceId, ...[0, 1, 2, 3].map((column) => events.map((event) => event[column]))] },
    );

    for (let page = 1; model.length < CONTACTS; page += 1) {
      const listed = (await call('GET', `/contacts?pageSize=200&page=${page}`)).body as { data: Array<{ id: string; createdAt: string; attributes: Record<string, unknown>; identities: ModelContact['identities'] }> };
      for (const row of listed.data) {
        const detail = (await call('GET', `/contacts/${row.id}`)).body as { tags: Array<{ id: string }>; lists: Array<{ id: string }> };
        model.push({
          id: row.id,
          createdAt: new Date(row.createdAt),
          attributes: row.attributes,
          identities: row.identities,
          tags: new Set(detail.tags.map((tag) => tag.id)),
          lists: new Set(detail.lists.map((list) => list.id)),
          events: events.filter((event) => event[0] === row.id).map(([, name, occurredAt, properties]) => ({ name, occurredAt, properties: JSON.parse(properties) })),
        });
      }
    }
    const stored = await api.db.query<{ n: string }>('SELECT count(*) AS n FROM contact_events WHERE workspace_id = $1', {
      bind: [workspace.workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(Number(stored[0].n)).toBe(events.length);
  }, 120_000);
  afterAll(() => api.close());

  const attribute = (key: string, operator: string, extra: Record<string, unknown> = {}) => ({ type: 'attribute', key, operator, ...extra }) as Rule;
  const dateAgo = (days: number) => daysAgo(days).toISOString();

  const leaves = (): Rule[] => [
    attribute('plan', 'eq', { value: 'pro' }), attribute('plan', 'neq', { value: 'pro' }), attribute('plan', 'in', { value: ['pro', 'team'] }),
    attribute('plan', 'not_in', { value: ['free'] }), attribute('plan', 'exists'), attribute('plan', 'not_exists'),
    attribute('score', 'eq', { value: 50 }), attribute('score', 'neq', { value: 50 }), attribute('score', 'gt', { value: 50 }),
    attribute('score', 'gte', { value: 50 }), attribute('score', 'lt', { value: 10 }), attribute('score', 'lte', { value: 10 }),
    attribute('score', 'between', { value: [20, 60] }), attribute('score', 'in', { value: [10, 20, 30] }), attribute('score', 'not_in', { value: [10, 20, 30] }),
    attribute('score', 'gte', { value: 42.5 }), attribute('score', 'not_exists'),
    attribute('vip', 'eq', { value: true }), attribute('vip', 'neq', { value: true }), attribute('vip', 'exists'),
    attribute('signupDate', 'before', { value: dateAgo(200).slice(0, 10) }), attribute('signupDate', 'after', { value: dateAgo(100) }),
    attribute('signupDate', 'between', { value: [dateAgo(300).slice(0, 10), dateAgo(50)] }), attribute('signupDate', 'within_last', { days: 60 }),
    attribute('signupDate', 'not_exists'),
    attribute('interests', 'contains', { value: 'tech' }), attribute('interests', 'not_contains', { value: 'tech' }),
    attribute('interests', 'in', { value: ['news', 'music'] }), attribute('interests', 'not_in', { value: ['news'] }), attribute('interests', 'exists'),
    attribute('city', 'eq', { value: 'Paris' }), attribute('city', 'neq', { value: 'Paris' }), attribute('city', 'contains', { value: 'PAR' }),
    attribute('city', 'not_contains', { value: 'new' }), attribute('city', 'in', { value: ['Paris', 'Berlin'] }), attribute('city', 'not_in', { value: ['Lyon'] }),
    attribute('nickname', 'eq', { value: 'bob' }), attribute('nickname', 'contains', { value: 'b' }), attribute('nickname', 'not_contains', { value: 'b' }),
    attribute('nickname', 'exists'), attribute('nickname', 'not_exists'), attribute('nickname', 'neq', { value: '' }),
    attribute('age', 'gt', { value: 24 }), attribute('age', 'between', { value: [18, 30] }), attribute('age', 'in', { value: [30, '30'] }),
    attribute('age', 'eq', { value: '30' }), attribute('age', 'eq', { value: true }), attribute('age', 'lte', { value: 30 }),
    attribute('profile', 'exists'), attribute('profile', 'eq', { value: 'x' }),
    attribute('misc', 'gt', { value: 3 }), attribute('misc', 'gte', { value: 7 }), attribute('misc', 'lt', { value: 10 }),
    attribute('misc', 'lte', { value: 3 }), attribute('misc', 'between', { value: [0, 10] }), attribute('misc', 'in', { value: [7, '7'] }),
    attribute('misc', 'neq', { value: 7 }), attribute('misc', 'not_in', { value: [3, 12] }),
    { type: 'identity', operator: 'has', channel: 'email', consent: 'opted_in' },
    { type: 'identity', operator: 'has_not', channel: 'whatsapp' },
    { type: 'identity', operator: 'has', channel: 'telegram', verified: true },
    { type: 'identity', operator: 'has', channel: 'email', isPrimary: true, consent: 'opted_out' },
    { type: 'identity', operator: 'has', channel: 'whatsapp', consent: 'unknown', verified: false },
    { type: 'identity', operator: 'has_not', channel: 'email', isPrimary: false },
    { type: 'tag', operator: 'has', tagId: tagIds[0] }, { type: 'tag', operator: 'has_not', tagId: tagIds[1] },
    { type: 'list', operator: 'member', listId: listIds[0] }, { type: 'list', operator: 'not_member', listId: listIds[1] },
    { type: 'created', operator: 'before', value: dateAgo(180) }, { type: 'created', operator: 'after', value: dateAgo(90) },
    { type: 'created', operator: 'between', value: [dateAgo(270), dateAgo(30)] }, { type: 'created', operator: 'within_last', days: 45 },
    { type: 'event', name: 'purchase', operator: 'at_least', count: 1 }, { type: 'event', name: 'purchase', operator: 'at_least', count: 3 },
    { type: 'event', name: 'purchase', operator: 'at_most', count: 0 }, { type: 'event', name: 'purchase', operator: 'at_most', count: 2 },
    { type: 'event', name: 'visit', operator: 'at_least', count: 2, withinDays: 30 }, { type: 'event', name: 'visit', operator: 'at_most', count: 1, withinDays: 60 },
    { type: 'event', name: 'purchase', operator: 'at_least', count: 1, properties: { plan: 'pro' } },
    { type: 'event', name: 'purchase', operator: 'at_most', count: 1, withinDays: 45, properties: { plan: 'free' } },
  ];

  function randomTree(depth: number): Rule {
    const size = 2 + Math.floor(random() * 3);
    const rules = Array.from({ length: size }, () => (depth > 1 && chance(0.35) ? randomTree(depth - 1) : pick(leaves())));
    return { type: 'group', operator: chance(0.5) ? 'and' : 'or', rules };
  }

  async function check(rule: Rule): Promise<void> {
    const definition = { type: 'group', operator: 'and', rules: [rule] };
    const now = new Date();
    const expected = model.filter((contact) => evaluate(rule, contact, FIELDS, now)).map((contact) => contact.id).sort();

    const preview = await call('POST', '/segments/preview', { definition });
    expect({ rule, status: preview.status }).toEqual({ rule, status: 200 });
    const { count, sample } = preview.body as { count: number; sample: Array<{ email: string | null }> };
    expect({ rule, count }).toEqual({ rule, count: expected.length });
    const expectedEmails = new Set(model.filter((contact) => expected.includes(contact.id)).map((contact) => contact.identities.find((identity) => identity.channel === 'email' && identity.isPrimary)?.address));
    expect(sample).toHaveLength(Math.min(5, expected.length));
    for (const row of sample) expect({ rule, email: expectedEmails.has(row.email ?? undefined) }).toEqual({ rule, email: true });

    const segment = (await call('POST', '/segments', { name: 'probe', definition })).body as { id: string };
    const listed: string[] = [];
    for (let page = 1; ; page += 1) {
      const rows = ((await call('GET', `/contacts?segmentId=${segment.id}&pageSize=200&page=${page}`)).body as { data: Array<{ id: string }> }).data;
      listed.push(...rows.map((row) => row.id));
      if (rows.length < 200) break;
    }
    expect({ rule, ids: listed.sort() }).toEqual({ rule, ids: expected });
  }

  it('every condition and operator on its own', async () => {
    for (const rule of leaves()) await check(rule);
  });

  it('negated and combined conditions in nested and/or trees', async () => {
    for (let tree = 0; tree < 30; tree += 1) await check(randomTree(3));
  });

  it('an empty root matches every contact', async () => {
    const preview = await call('POST', '/segments/preview', { definition: { operator: 'and', rules: [] } });
    expect((preview.body as { count: number }).count).toBe(CONTACTS);
  });
});
