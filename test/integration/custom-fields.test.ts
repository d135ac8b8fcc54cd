import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

describe('custom fields', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function workspace() {
    const { apiKey } = await createTestWorkspace(api);
    return api.as(apiKey);
  }

  it('lists the system fields first, then the workspace\'s own', async () => {
    const call = await workspace();
    const created = await call('POST', '/custom-fields', { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'], groupName: 'Billing' });
    expect(created).toMatchObject({
      status: 201,
      body: { id: expect.any(String), key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'], groupName: 'Billing', isSystem: false, archived: false },
    });
    const listed = (await call('GET', '/custom-fields')).body as { data: Array<{ id: string; key: string; isSystem: boolean }> };
    expect(listed.data.map((field) => [field.key, field.isSystem])).toEqual([
      ['firstName', true], ['lastName', true], ['locale', true], ['timezone', true], ['plan', false],
    ]);
    expect(listed.data[0].id).toBe('system:firstName');
  });

  it('a key taken in any case, or a system key, answers 409 with the existing id', async () => {
    const call = await workspace();
    const first = (await call('POST', '/custom-fields', { key: 'score', label: 'Score', type: 'number' })).body as { id: string };
    expect(await call('POST', '/custom-fields', { key: 'Score', label: 'Again', type: 'text' })).toMatchObject({
      status: 409,
      body: { error: 'conflict', id: first.id },
    });
    expect(await call('POST', '/custom-fields', { key: 'firstname', label: 'Mine', type: 'text' })).toMatchObject({
      status: 409,
      body: { error: 'conflict', id: 'system:firstName' },
    });
  });

  it('options are required for select types and refused for others', async () => {
    const call = await workspace();
    expect((await call('POST', '/custom-fields', { key: 'tier', label: 'Tier', type: 'select' })).status).toBe(422);
    expect((await call('POST', '/custom-fields', { key: 'n', label: 'N', type: 'number', options: ['a'] })).status).toBe(422);
    expect((await call('POST', '/custom-fields', { key: '1bad', label: 'Bad', type: 'text' })).status).toBe(422);
  });

  it('attribute values are checked against their field, and a wrong one answers 422 naming the attribute', async () => {
    const call = await workspace();
    await call('POST', '/custom-fields', { key: 'score', label: 'Score', type: 'number' });
    await call('POST', '/custom-fields', { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'] });
    await call('POST', '/custom-fields', { key: 'topics', label: 'Topics', type: 'multiselect', options: ['a', 'b'] });
    await call('POST', '/custom-fields', { key: 'born', label: 'Born', type: 'date' });
    await call('POST', '/custom-fields', { key: 'active', label: 'Active', type: 'boolean' });
    const refused = await call('POST', '/contacts', {
      identities: [{ channel: 'email', address: 'typed@example.com' }],
      attributes: { score: '12', plan: 'gold', topics: ['a', 'z'], born: '2023-02-30', active: 'yes', firstName: 7, free: 'anything' },
    });
    expect(refused.status).toBe(422);
    expect(Object.keys((refused.body as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual([
      'attributes.active', 'attributes.born', 'attributes.firstName', 'attributes.plan', 'attributes.score', 'attributes.topics',
    ]);
    expect((await call('GET', '/contacts')).body).toMatchObject({ total: 0 });

    const accepted = await call('POST', '/contacts', {
      identities: [{ channel: 'email', address: 'typed@example.com' }],
      attributes: { score: 12, plan: 'pro', topics: ['b', 'a', 'b'], born: '1990-05-01', active: true, free: { any: ['json'] } },
    });
    expect(accepted.status).toBe(201);
    const detail = (await call('GET', `/contacts/${(accepted.body as { id: string }).id}`)).body as { attributes: object };
    expect(detail.attributes).toEqual({ score: 12, plan: 'pro', topics: ['b', 'a'], born: '1990-05-01T00:00:00.000Z', active: true, free: { any: ['json'] } });
  });

  it('values of an archived field are ignored with a warning; unarchiving accepts them again', async () => {
    const call = await workspace();
    const field = (await call('POST', '/custom-fields', { key: 'legacy', label: 'Legacy', type: 'text' })).body as { id: string };
    const archived = await call('PATCH', `/custom-fields/${field.id}`, { archived: true, label: 'Old' });
    expect(archived).toMatchObject({ status: 200, body: { archived: true, label: 'Old', key: 'legacy', type: 'text' } });
    const upserted = await call('POST', '/contacts', { identities: [{ channel: 'email', address: 'a@example.com' }], attributes: { legacy: 'x', other: 1 } });
    expect(upserted.body).toMatchObject({ created: true, warnings: ['attributes.legacy: the custom field is archived; the value was ignored'] });
    const id = (upserted.body as { id: string }).id;
    expect((await call('GET', `/contacts/${id}`)).body).toMatchObject({ attributes: { other: 1 } });
    await call('PATCH', `/custom-fields/${field.id}`, { archived: false });
    await call('POST', '/contacts', { identities: [{ channel: 'email', address: 'a@example.com' }], attributes: { legacy: 'x' } });
    expect((await call('GET', `/contacts/${id}`)).body).toMatchObject({ attributes: { other: 1, legacy: 'x' } });
  });

  it('system fields cannot be changed, and options only apply to select types', async () => {
    const call = await workspace();
    expect(await call('PATCH', '/custom-fields/system:firstName', { label: 'Given name' })).toMatchObject({ status: 409 });
    expect((await call('PATCH', '/custom-fields/system:nothing', { label: 'x' })).status).toBe(404);
    const field = (await call('POST', '/custom-fields', { key: 'n', label: 'N', type: 'number' })).body as { id: string };
    expect((await call('PATCH', `/custom-fields/${field.id}`, { options: ['a'] })).status).toBe(422);
    const select = (await call('POST', '/custom-fields', { key: 's', label: 'S', type: 'select', options: ['a'] })).body as { id: string };
    expect((await call('PATCH', `/custom-fields/${select.id}`, { options: ['a', 'b'], groupName: null })).body).toMatchObject({ options: ['a', 'b'], groupName: null });
  });
});
