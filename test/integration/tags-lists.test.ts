import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

describe('tags and lists', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function workspaceWithContacts(count: number) {
    const { call } = await createTestWorkspace(api);
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1) {
      ids.push(((await call('POST', '/contacts', { identities: [{ channel: 'email', address: `c${index}@example.com` }] })).body as { id: string }).id);
    }
    return { call, ids };
  }

  describe('the repeat-behaviour table', () => {
    it('POST /tags: 201 the first time, 200 created false with the existing id for the same name in any case', async () => {
      const { call } = await workspaceWithContacts(0);
      const first = await call('POST', '/tags', { name: 'VIP', color: '#ff0000' });
      expect(first).toMatchObject({ status: 201, body: { id: expect.any(String), name: 'VIP', created: true } });
      const repeat = await call('POST', '/tags', { name: 'vip', color: '#00ff00' });
      expect(repeat).toMatchObject({ status: 200, body: { id: (first.body as { id: string }).id, name: 'VIP', created: false } });
      expect((await call('GET', '/tags')).body).toEqual({
        data: [{ id: (first.body as { id: string }).id, name: 'VIP', color: '#ff0000', createdAt: expect.any(String), contacts: 0 }],
      });
    });

    it('POST /lists: 201 the first time, 200 created false with the existing id for the same name in any case', async () => {
      const { call } = await workspaceWithContacts(0);
      const first = await call('POST', '/lists', { name: 'Newsletter' });
      expect(first).toMatchObject({ status: 201, body: { name: 'Newsletter', created: true } });
      const repeat = await call('POST', '/lists', { name: ' NEWSLETTER ' });
      expect(repeat).toMatchObject({ status: 200, body: { id: (first.body as { id: string }).id, name: 'Newsletter', created: false } });
    });

    it('simultaneous creations of one tag name answer one 201 and the rest 200 with the same id', async () => {
      const { call } = await workspaceWithContacts(0);
      const results = await Promise.all(Array.from({ length: 6 }, (_, index) => call('POST', '/tags', { name: index % 2 ? 'Promo' : 'PROMO' })));
      expect(results.map((result) => result.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((result) => (result.body as { id: string }).id)).size).toBe(1);
    });

    it('POST /lists/:id/contacts: the added count the first time, added 0 and no duplicates on repeat', async () => {
      const { call, ids } = await workspaceWithContacts(3);
      const list = (await call('POST', '/lists', { name: 'L' })).body as { id: string };
      expect(await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids.slice(0, 2) })).toMatchObject({ status: 200, body: { added: 2 } });
      expect((await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids })).body).toEqual({ added: 1 });
      expect((await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids })).body).toEqual({ added: 0 });
      expect(((await call('GET', '/lists')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(3);
      expect((await call('GET', `/contacts?listId=${list.id}`)).body).toMatchObject({ total: 3 });
    });
  });

  it('removing list members is idempotent and counts only what was removed', async () => {
    const { call, ids } = await workspaceWithContacts(2);
    const list = (await call('POST', '/lists', { name: 'L' })).body as { id: string };
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids });
    expect((await call('DELETE', `/lists/${list.id}/contacts`, { contactIds: [ids[0]] })).body).toEqual({ removed: 1 });
    expect((await call('DELETE', `/lists/${list.id}/contacts`, { contactIds: ids })).body).toEqual({ removed: 1 });
    expect((await call('DELETE', `/lists/${list.id}/contacts`, { contactIds: ids })).body).toEqual({ removed: 0 });
    expect(((await call('GET', '/lists')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(0);
  });

  it('adding an id that is not a contact of the workspace answers 422 naming it, and adds nothing', async () => {
    const { call, ids } = await workspaceWithContacts(1);
    const other = await workspaceWithContacts(1);
    const list = (await call('POST', '/lists', { name: 'L' })).body as { id: string };
    const refused = await call('POST', `/lists/${list.id}/contacts`, { contactIds: [ids[0], other.ids[0]] });
    expect(refused).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'contactIds[1]': [expect.any(String)] } } } });
    expect(((await call('GET', '/lists')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(0);
  });

  it('tags are added to a contact by name or id, once, and names that do not exist yet are created', async () => {
    const { call, ids } = await workspaceWithContacts(1);
    const vip = (await call('POST', '/tags', { name: 'VIP' })).body as { id: string };
    const added = await call('POST', `/contacts/${ids[0]}/tags`, { tags: [vip.id, 'vip', 'New one', 'new ONE'] });
    expect(added).toMatchObject({ status: 200, body: { added: 2, tags: [{ name: 'New one' }, { id: vip.id, name: 'VIP' }] } });
    expect((await call('POST', `/contacts/${ids[0]}/tags`, { tags: ['VIP', 'New one'] })).body).toMatchObject({ added: 0 });
    const tags = (await call('GET', '/tags')).body as { data: Array<{ name: string; contacts: number }> };
    expect(tags.data.map((tag) => [tag.name, tag.contacts]).sort()).toEqual([['New one', 1], ['VIP', 1]]);
  });

  it('tags are removed by name or id; a repeat removes 0', async () => {
    const { call, ids } = await workspaceWithContacts(1);
    await call('POST', `/contacts/${ids[0]}/tags`, { tags: ['a', 'b', 'c'] });
    const b = ((await call('GET', '/tags')).body as { data: Array<{ id: string; name: string }> }).data.find((tag) => tag.name === 'b');
    const removed = await call('DELETE', `/contacts/${ids[0]}/tags`, { tags: ['A', b?.id, 'unknown'] });
    expect(removed.body).toEqual({ removed: 2, tags: [{ id: expect.any(String), name: 'c' }] });
    expect((await call('DELETE', `/contacts/${ids[0]}/tags`, { tags: ['A'] })).body).toMatchObject({ removed: 0 });
  });

  it('a tag id that is not the workspace\'s answers 422 naming its position', async () => {
    const { call, ids } = await workspaceWithContacts(1);
    const refused = await call('POST', `/contacts/${ids[0]}/tags`, { tags: ['ok', '00000000-0000-4000-8000-000000000000'] });
    expect(refused).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'tags[1]': [expect.any(String)] } } } });
    expect((await call('GET', `/contacts/${ids[0]}`)).body).toMatchObject({ tags: [] });
  });

  it('deleting a tag or a list removes its memberships and leaves the contacts', async () => {
    const { call, ids } = await workspaceWithContacts(1);
    await call('POST', `/contacts/${ids[0]}/tags`, { tags: ['doomed'] });
    const list = (await call('POST', '/lists', { name: 'Doomed' })).body as { id: string };
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids });
    const tag = ((await call('GET', '/tags')).body as { data: Array<{ id: string }> }).data[0];
    expect(await call('DELETE', `/tags/${tag.id}`)).toMatchObject({ status: 200, body: { deleted: true, id: tag.id } });
    expect(await call('DELETE', `/lists/${list.id}`)).toMatchObject({ status: 200, body: { deleted: true, id: list.id } });
    expect((await call('DELETE', `/tags/${tag.id}`)).status).toBe(404);
    expect((await call('GET', `/contacts/${ids[0]}`)).body).toMatchObject({ tags: [], lists: [] });
  });

  it('erasing a contact lowers the counts of its tags and lists', async () => {
    const { call, ids } = await workspaceWithContacts(2);
    for (const id of ids) await call('POST', `/contacts/${id}/tags`, { tags: ['t'] });
    const list = (await call('POST', '/lists', { name: 'L' })).body as { id: string };
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: ids });
    await call('DELETE', `/contacts/${ids[0]}`);
    expect(((await call('GET', '/tags')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(1);
    expect(((await call('GET', '/lists')).body as { data: Array<{ contacts: number }> }).data[0].contacts).toBe(1);
  });
});
