import { insertContactEvent } from '../../db/repositories/contact-events';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

interface Upserted {
  id: string;
  created: boolean;
  identitiesAdded: number;
  warnings?: string[];
}

interface Detail {
  id: string;
  attributes: Record<string, unknown>;
  identities: Array<{ channel: string; address: string; consent: string; verified: boolean; isPrimary: boolean }>;
  tags: Array<{ id: string; name: string }>;
  lists: Array<{ id: string; name: string }>;
}

describe('contacts', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  const client = (key: string) => ({
    call: api.as(key),
    upsert: async (body: unknown) => api.call('POST', '/api/v1/contacts', { key, body }),
    detail: async (id: string) => (await api.call('GET', `/api/v1/contacts/${id}`, { key })).body as Detail,
  });

  describe('the natural-key upsert', () => {
    it('a new address creates a contact (201 created true) and a repeat merges into it (200 created false)', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const first = await c.upsert({ identities: [{ channel: 'email', address: 'Ann@Example.COM' }], attributes: { firstName: 'Ann' } });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ id: expect.any(String), created: true, identitiesAdded: 1 });

      const repeat = await c.upsert({ identities: [{ channel: 'email', address: 'ann@example.com' }], attributes: { plan: 'pro' } });
      expect(repeat.status).toBe(200);
      expect(repeat.body).toEqual({ id: (first.body as Upserted).id, created: false, identitiesAdded: 0 });
      const detail = await c.detail((first.body as Upserted).id);
      expect(detail.attributes).toEqual({ firstName: 'Ann', plan: 'pro' });
      expect(detail.identities).toEqual([
        { channel: 'email', address: 'ann@example.com', consent: 'unknown', verified: false, isPrimary: true },
      ]);
    });

    it('an address on another channel of a known contact is added to it, with identitiesAdded counting it', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const first = (await c.upsert({ identities: [{ channel: 'email', address: 'bo@example.com' }] })).body as Upserted;
      const merged = await c.upsert({
        identities: [
          { channel: 'email', address: 'bo@example.com' },
          { channel: 'whatsapp', address: '+1 415 555 0100' },
          { channel: 'telegram', address: '0012345' },
        ],
      });
      expect(merged).toMatchObject({ status: 200, body: { id: first.id, created: false, identitiesAdded: 2 } });
      const detail = await c.detail(first.id);
      expect(detail.identities.map((identity) => [identity.channel, identity.address, identity.isPrimary])).toEqual([
        ['email', 'bo@example.com', true],
        ['telegram', '12345', true],
        ['whatsapp', '+14155550100', true],
      ]);
    });

    it('identities that belong to different contacts answer 409 ambiguous_identities with both ids and change nothing', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const one = (await c.upsert({ identities: [{ channel: 'email', address: 'one@example.com' }], attributes: { a: 1 } })).body as Upserted;
      const two = (await c.upsert({ identities: [{ channel: 'email', address: 'two@example.com' }] })).body as Upserted;
      const clash = await c.upsert({
        identities: [
          { channel: 'email', address: 'one@example.com' },
          { channel: 'email', address: 'two@example.com' },
          { channel: 'email', address: 'three@example.com' },
        ],
        attributes: { a: 2 },
      });
      expect(clash.status).toBe(409);
      expect(clash.body).toEqual({ error: 'ambiguous_identities', message: expect.any(String), contactIds: [one.id, two.id].sort() });
      expect((await c.detail(one.id)).attributes).toEqual({ a: 1 });
      const third = await c.call('GET', '/contacts?address=three@example.com');
      expect((third.body as { total: number }).total).toBe(0);
    });

    it('attributes merge key by key, and a null deletes its key', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const identities = [{ channel: 'email', address: 'merge@example.com' }];
      const { id } = (await c.upsert({ identities, attributes: { a: 1, b: 'two', c: { nested: true } } })).body as Upserted;
      await c.upsert({ identities, attributes: { b: null, c: [1, 2], d: false, missing: null } });
      expect((await c.detail(id)).attributes).toEqual({ a: 1, c: [1, 2], d: false });
    });

    it('consent changes only when declared: leaving it out never clears an opt-in', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const { id } = (await c.upsert({ identities: [{ channel: 'email', address: 'optin@example.com', consent: 'opted_in', verified: true }] }))
        .body as Upserted;
      await c.upsert({ identities: [{ channel: 'email', address: 'optin@example.com' }], attributes: { x: 1 } });
      expect((await c.detail(id)).identities[0]).toMatchObject({ consent: 'opted_in', verified: true });
      await c.upsert({ identities: [{ channel: 'email', address: 'optin@example.com', consent: 'opted_out' }] });
      expect((await c.detail(id)).identities[0]).toMatchObject({ consent: 'opted_out', verified: true });
    });

    it('one primary per channel: declaring another primary moves it, and false on the only primary is ignored with a warning', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const { id } = (await c.upsert({ identities: [{ channel: 'email', address: 'p1@example.com' }] })).body as Upserted;
      await c.upsert({ identities: [{ channel: 'email', address: 'p1@example.com' }, { channel: 'email', address: 'p2@example.com' }] });
      expect((await c.detail(id)).identities.map((identity) => [identity.address, identity.isPrimary])).toEqual([
        ['p1@example.com', true],
        ['p2@example.com', false],
      ]);
      await c.upsert({ identities: [{ channel: 'email', address: 'p2@example.com', isPrimary: true }] });
      expect((await c.detail(id)).identities.map((identity) => [identity.address, identity.isPrimary])).toEqual([
        ['p2@example.com', true],
        ['p1@example.com', false],
      ]);
      const ignored = await c.upsert({ identities: [{ channel: 'email', address: 'p2@example.com', isPrimary: false }] });
      expect((ignored.body as Upserted).warnings).toEqual([expect.stringContaining('identities[0].isPrimary')]);
      expect((await c.detail(id)).identities[0]).toMatchObject({ address: 'p2@example.com', isPrimary: true });
    });

    it('an invalid address answers 422 naming the identity field', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const bad = await c.upsert({
        identities: [
          { channel: 'email', address: 'ok@example.com' },
          { channel: 'email', address: 'not-an-address' },
          { channel: 'whatsapp', address: '4155550100' },
          { channel: 'telegram', address: '@someone' },
        ],
      });
      expect(bad.status).toBe(422);
      expect(Object.keys((bad.body as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual([
        'identities[1].address',
        'identities[2].address',
        'identities[3].address',
      ]);
    });

    it('the same address twice in one request, or two primaries on a channel, answer 422', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const twice = await c.upsert({ identities: [{ channel: 'email', address: 'x@example.com' }, { channel: 'email', address: 'X@example.com' }] });
      expect(twice.body).toEqual({ error: { formErrors: [], fieldErrors: { 'identities[1].address': [expect.stringContaining('identities[0]')] } } });
      const primaries = await c.upsert({
        identities: [
          { channel: 'email', address: 'x@example.com', isPrimary: true },
          { channel: 'email', address: 'y@example.com', isPrimary: true },
        ],
      });
      expect(primaries.body).toMatchObject({ error: { fieldErrors: { 'identities[1].isPrimary': [expect.any(String)] } } });
    });

    it('simultaneous upserts of one new address end in one contact', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          c.upsert({ identities: [{ channel: 'email', address: 'race@example.com' }], attributes: { [`k${index}`]: index } }),
        ),
      );
      expect(results.map((result) => result.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
      const ids = new Set(results.map((result) => (result.body as Upserted).id));
      expect(ids.size).toBe(1);
      const [id] = [...ids];
      expect(Object.keys((await c.detail(id)).attributes).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
      const listed = await c.call('GET', '/contacts');
      expect((listed.body as { total: number }).total).toBe(1);
    });

    it('simultaneous upserts adding different new addresses to one contact keep a single primary', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const { id } = (await c.upsert({ identities: [{ channel: 'email', address: 'base@example.com' }] })).body as Upserted;
      const results = await Promise.all(
        ['+14155550101', '+14155550102', '+14155550103', '+14155550104'].map((phone) =>
          c.upsert({ identities: [{ channel: 'email', address: 'base@example.com' }, { channel: 'whatsapp', address: phone }] }),
        ),
      );
      expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200]);
      const whatsapp = (await c.detail(id)).identities.filter((identity) => identity.channel === 'whatsapp');
      expect(whatsapp).toHaveLength(4);
      expect(whatsapp.filter((identity) => identity.isPrimary)).toHaveLength(1);
    });
  });

  describe('reading and erasing', () => {
    it('lists newest first with page and pageSize, and filters by address, tag, list, attribute and text', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const ids: string[] = [];
      for (const [index, name] of ['Alma', 'Bert', 'Cleo'].entries()) {
        const body = { identities: [{ channel: 'email', address: `${name.toLowerCase()}@example.com` }], attributes: { firstName: name, rank: index } };
        ids.push(((await c.upsert(body)).body as Upserted).id);
      }
      const page = await c.call('GET', '/contacts?page=2&pageSize=2');
      expect(page.body).toMatchObject({ total: 3, page: 2, pageSize: 2, data: [{ id: ids[0] }] });
      expect((await c.call('GET', '/contacts')).body).toMatchObject({ page: 1, pageSize: 50, data: [{ id: ids[2] }, { id: ids[1] }, { id: ids[0] }] });

      const tag = (await c.call('POST', '/tags', { name: 'vip' })).body as { id: string };
      await c.call('POST', `/contacts/${ids[1]}/tags`, { tags: [tag.id] });
      const list = (await c.call('POST', '/lists', { name: 'Newsletter' })).body as { id: string };
      await c.call('POST', `/lists/${list.id}/contacts`, { contactIds: [ids[0], ids[2]] });

      const only = async (query: string) => ((await c.call('GET', `/contacts?${query}`)).body as { data: Array<{ id: string }> }).data.map((row) => row.id);
      expect(await only('address=BERT@EXAMPLE.COM')).toEqual([ids[1]]);
      expect(await only(`tagId=${tag.id}`)).toEqual([ids[1]]);
      expect(await only(`listId=${list.id}`)).toEqual([ids[2], ids[0]]);
      expect(await only('attribute=rank:2')).toEqual([ids[2]]);
      expect(await only('attribute=rank:2&attribute=firstName:Alma')).toEqual([]);
      expect(await only('q=cle')).toEqual([ids[2]]);
      expect(await only('q=ALMA@')).toEqual([ids[0]]);
      expect(await only('address=not-an-address')).toEqual([]);
      expect((await c.call('GET', '/contacts?pageSize=201')).status).toBe(422);
    });

    it('the detail shows identities, tags and lists; an unknown id answers 404', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const { id } = (await c.upsert({ identities: [{ channel: 'email', address: 'd@example.com', consent: 'opted_in' }] })).body as Upserted;
      await c.call('POST', `/contacts/${id}/tags`, { tags: ['Beta', 'alpha'] });
      const list = (await c.call('POST', '/lists', { name: 'L' })).body as { id: string };
      await c.call('POST', `/lists/${list.id}/contacts`, { contactIds: [id] });
      const detail = await c.detail(id);
      expect(detail).toEqual({
        id,
        attributes: {},
        createdAt: expect.any(String),
        identities: [{ channel: 'email', address: 'd@example.com', consent: 'opted_in', verified: false, isPrimary: true }],
        tags: [{ id: expect.any(String), name: 'alpha' }, { id: expect.any(String), name: 'Beta' }],
        lists: [{ id: list.id, name: 'L' }],
      });
      expect((await c.call('GET', '/contacts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await c.call('GET', '/contacts/not-a-uuid')).status).toBe(404);
    });

    it('erasing deletes the person\'s data and keeps the addresses suppressed, so a re-add is refused until lifted', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      const identities = [{ channel: 'email', address: 'gone@example.com' }, { channel: 'whatsapp', address: '+14155550199' }];
      const { id } = (await c.upsert({ identities, attributes: { firstName: 'Gone' } })).body as Upserted;
      const tag = (await c.call('POST', '/tags', { name: 't' })).body as { id: string };
      await c.call('POST', `/contacts/${id}/tags`, { tags: [tag.id] });

      expect(await c.call('DELETE', `/contacts/${id}`)).toMatchObject({ status: 200, body: { deleted: true, id, suppressed: 2 } });
      expect((await c.call('GET', `/contacts/${id}`)).status).toBe(404);
      expect((await c.call('DELETE', `/contacts/${id}`)).status).toBe(404);
      expect(((await c.call('GET', '/tags')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(0);
      const suppressions = (await c.call('GET', '/suppressions?reason=erased')).body as { data: Array<{ address: string }> };
      expect(suppressions.data.map((row) => row.address).sort()).toEqual(['+14155550199', 'gone@example.com']);

      const readd = await c.upsert({ identities: [{ channel: 'email', address: 'GONE@example.com' }] });
      // 409 stays for ambiguous_identities alone (the spec): an erased address is an input refused by its field.
      expect(readd).toMatchObject({
        status: 422,
        body: { error: { fieldErrors: { 'identities[0].address': [expect.stringContaining('erased')] } } },
      });
      expect((await c.call('DELETE', '/suppressions/gone%40example.com')).status).toBe(200);
      expect((await c.upsert({ identities: [{ channel: 'email', address: 'gone@example.com' }] })).status).toBe(201);
    });

    it('an opt-in declared for an unsubscribed address is recorded with a warning that it stays suppressed', async () => {
      const { apiKey } = await createTestWorkspace(api);
      const c = client(apiKey);
      await c.call('POST', '/suppressions', { address: 'unsub@example.com', reason: 'unsubscribed' });
      const upserted = await c.upsert({ identities: [{ channel: 'email', address: 'unsub@example.com', consent: 'opted_in' }] });
      expect(upserted.status).toBe(201);
      expect((upserted.body as Upserted).warnings).toEqual([expect.stringContaining('stays suppressed (unsubscribed)')]);
    });

    it('the journey lists the contact\'s events as touches, newest first, paging back with before', async () => {
      const { apiKey, workspaceId } = await createTestWorkspace(api);
      const c = client(apiKey);
      const { id } = (await c.upsert({ identities: [{ channel: 'email', address: 'j@example.com' }] })).body as Upserted;
      await insertContactEvent(api.db, workspaceId, { contactId: id, name: 'signed_up', occurredAt: new Date('2026-01-01T00:00:00Z') });
      await insertContactEvent(api.db, workspaceId, { contactId: id, name: 'purchase', occurredAt: new Date('2026-02-01T00:00:00Z') });
      const journey = await c.call('GET', `/contacts/${id}/journey`);
      expect(journey.body).toEqual({
        data: [
          { type: 'touch', at: '2026-02-01T00:00:00.000Z', kind: 'event', name: 'purchase', test: false },
          { type: 'touch', at: '2026-01-01T00:00:00.000Z', kind: 'event', name: 'signed_up', test: false },
        ],
        nextCursor: null,
      });
      const older = await c.call('GET', `/contacts/${id}/journey?limit=1&before=2026-02-01T00:00:00.000Z`);
      expect((older.body as { data: Array<{ name: string }> }).data.map((entry) => entry.name)).toEqual(['signed_up']);
    });

    it('a contacts:read key can list but not write', async () => {
      const { workspaceId } = await createTestWorkspace(api);
      const { apiKey } = await createTestKey(api, workspaceId, ['contacts:read']);
      const c = client(apiKey);
      expect((await c.call('GET', '/contacts')).status).toBe(200);
      expect(await c.upsert({ identities: [{ channel: 'email', address: 'r@example.com' }] })).toMatchObject({
        status: 403,
        body: { error: 'forbidden', need: 'contacts:write' },
      });
    });
  });
});
