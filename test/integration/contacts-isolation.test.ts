import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * Every contacts-area route, called with the ids of another workspace's contact, tag, list, segment,
 * custom field and suppressed address, answers exactly as for ids that do not exist (404), changes
 * nothing there, and lists show only the caller's own resources.
 */
describe('contacts and audiences are isolated per workspace', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function seeded() {
    const { call } = await createTestWorkspace(api);
    const contact = (await call('POST', '/contacts', { identities: [{ channel: 'email', address: 'shared@example.com' }], attributes: { plan: 'pro' } })).body as { id: string };
    const tag = (await call('POST', '/tags', { name: 'shared' })).body as { id: string };
    const list = (await call('POST', '/lists', { name: 'shared' })).body as { id: string };
    await call('POST', `/contacts/${contact.id}/tags`, { tags: [tag.id] });
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: [contact.id] });
    const field = (await call('POST', '/custom-fields', { key: 'plan', label: 'Plan', type: 'text' })).body as { id: string };
    const segment = (await call('POST', '/segments', { name: 's', definition: { operator: 'and', rules: [{ type: 'tag', operator: 'has', tagId: tag.id }] } })).body as { id: string };
    await call('POST', '/suppressions', { address: 'blocked@example.com' });
    return { call, contact: contact.id, tag: tag.id, list: list.id, field: field.id, segment: segment.id };
  }

  it('another workspace\'s ids answer 404 on every route that takes one', async () => {
    const theirs = await seeded();
    const mine = await seeded();
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/contacts/${theirs.contact}`],
      ['DELETE', `/contacts/${theirs.contact}`],
      ['GET', `/contacts/${theirs.contact}/journey`],
      ['POST', `/contacts/${theirs.contact}/tags`, { tags: ['x'] }],
      ['DELETE', `/contacts/${theirs.contact}/tags`, { tags: ['shared'] }],
      ['GET', `/contacts?segmentId=${theirs.segment}`],
      ['DELETE', `/tags/${theirs.tag}`],
      ['DELETE', `/lists/${theirs.list}`],
      ['POST', `/lists/${theirs.list}/contacts`, { contactIds: [mine.contact] }],
      ['DELETE', `/lists/${theirs.list}/contacts`, { contactIds: [theirs.contact] }],
      ['GET', `/segments/${theirs.segment}`],
      ['PATCH', `/segments/${theirs.segment}`, { name: 'taken' }],
      ['DELETE', `/segments/${theirs.segment}`],
      ['PATCH', `/custom-fields/${theirs.field}`, { archived: true }],
      ['DELETE', '/suppressions/blocked%40example.com'],
    ];
    // Mine has a suppression of the same address; lift it first, so the last attempt can only hit theirs.
    await mine.call('DELETE', '/suppressions/blocked%40example.com');
    for (const [method, path, body] of attempts) {
      const response = await mine.call(method, path, body);
      expect({ method, path, status: response.status, error: (response.body as { error?: unknown }).error }).toEqual({ method, path, status: 404, error: 'not_found' });
    }

    const detail = (await theirs.call('GET', `/contacts/${theirs.contact}`)).body as { tags: unknown[]; lists: unknown[] };
    expect(detail.tags).toHaveLength(1);
    expect(detail.lists).toHaveLength(1);
    expect((await theirs.call('GET', `/segments/${theirs.segment}`)).body).toMatchObject({ name: 's' });
    expect(((await theirs.call('GET', '/suppressions')).body as { total: number }).total).toBe(1);
  });

  it('another workspace\'s ids inside a body are unknown ids: 422 naming them', async () => {
    const theirs = await seeded();
    const mine = await seeded();
    expect((await mine.call('POST', `/contacts/${mine.contact}/tags`, { tags: [theirs.tag] })).body).toMatchObject({ error: { fieldErrors: { 'tags[0]': [expect.any(String)] } } });
    expect((await mine.call('POST', `/lists/${mine.list}/contacts`, { contactIds: [theirs.contact] })).body).toMatchObject({
      error: { fieldErrors: { 'contactIds[0]': [expect.any(String)] } },
    });
    const rules = { operator: 'or', rules: [{ type: 'tag', operator: 'has', tagId: theirs.tag }, { type: 'list', operator: 'member', listId: theirs.list }] };
    expect(Object.keys(((await mine.call('POST', '/segments/preview', { definition: rules })).body as { error: { fieldErrors: object } }).error.fieldErrors)).toEqual([
      'definition.rules[0].tagId',
      'definition.rules[1].listId',
    ]);
  });

  it('lists, previews and the same address in two workspaces stay apart', async () => {
    const theirs = await seeded();
    const mine = await seeded();
    const contacts = (await mine.call('GET', '/contacts')).body as { data: Array<{ id: string }>; total: number };
    expect(contacts.data.map((row) => row.id)).toEqual([mine.contact]);
    expect(((await mine.call('GET', '/tags')).body as { data: Array<{ id: string }> }).data.map((tag) => tag.id)).toEqual([mine.tag]);
    expect(((await mine.call('GET', '/lists')).body as { data: Array<{ id: string }> }).data.map((list) => list.id)).toEqual([mine.list]);
    expect(((await mine.call('GET', '/segments')).body as { data: Array<{ id: string }> }).data.map((segment) => segment.id)).toEqual([mine.segment]);
    expect(((await mine.call('GET', '/custom-fields')).body as { data: Array<{ id: string }> }).data.map((field) => field.id)).toContain(mine.field);
    expect(((await mine.call('GET', '/custom-fields')).body as { data: Array<{ id: string }> }).data.map((field) => field.id)).not.toContain(theirs.field);
    const everyone = { operator: 'and', rules: [] };
    expect(((await mine.call('POST', '/segments/preview', { definition: everyone })).body as { count: number }).count).toBe(1);
    expect((await mine.call('DELETE', `/contacts/${mine.contact}`)).status).toBe(200);
    expect((await theirs.call('GET', `/contacts/${theirs.contact}`)).status).toBe(200);
    expect(((await theirs.call('GET', '/suppressions?reason=erased')).body as { total: number }).total).toBe(0);
  });
});
