import { randomUUID } from 'node:crypto';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

describe('segments', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function workspace() {
    const { apiKey } = await createTestWorkspace(api);
    return api.as(apiKey);
  }

  const planIsPro = { operator: 'and', rules: [{ type: 'attribute', key: 'plan', operator: 'eq', value: 'pro' }] };

  it('create, read, list, rename, replace the rules and delete', async () => {
    const call = await workspace();
    const created = await call('POST', '/segments', { name: 'Pro', definition: planIsPro });
    expect(created).toMatchObject({
      status: 201,
      body: { id: expect.any(String), name: 'Pro', kind: 'dynamic', definition: { type: 'group', ...planIsPro }, createdAt: expect.any(String) },
    });
    const { id } = created.body as { id: string };
    expect((await call('GET', `/segments/${id}`)).body).toMatchObject({ id, name: 'Pro' });
    const renamed = await call('PATCH', `/segments/${id}`, { name: 'Pro users' });
    expect(renamed.body).toMatchObject({ name: 'Pro users', definition: { type: 'group', ...planIsPro } });
    const everyone = { operator: 'or', rules: [{ type: 'created', operator: 'within_last', days: 30 }] };
    expect((await call('PATCH', `/segments/${id}`, { definition: everyone })).body).toMatchObject({ name: 'Pro users', definition: everyone });
    expect(((await call('GET', '/segments')).body as { data: Array<{ id: string }> }).data.map((segment) => segment.id)).toEqual([id]);
    expect(await call('DELETE', `/segments/${id}`)).toMatchObject({ status: 200, body: { deleted: true, id } });
    expect((await call('GET', `/segments/${id}`)).status).toBe(404);
  });

  it('a bad node is named by its full path in the 422', async () => {
    const call = await workspace();
    const refused = await call('POST', '/segments', {
      name: 'Bad',
      definition: {
        operator: 'and',
        rules: [
          { type: 'tag', operator: 'has', tagId: '00000000-0000-4000-8000-000000000000' },
          { type: 'group', operator: 'or', rules: [{ type: 'attribute', key: 'plan', operator: 'equals', value: 'pro' }] },
        ],
      },
    });
    expect(refused.status).toBe(422);
    expect(Object.keys((refused.body as { error: { fieldErrors: object } }).error.fieldErrors)).toEqual(['definition.rules[1].rules[0].operator']);
  });

  it('the checks that need the workspace name their node too: unknown tags, types of custom fields', async () => {
    const call = await workspace();
    await call('POST', '/custom-fields', { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'] });
    await call('POST', '/custom-fields', { key: 'born', label: 'Born', type: 'date' });
    const refused = await call('POST', '/segments/preview', {
      definition: {
        operator: 'or',
        rules: [
          { type: 'tag', operator: 'has', tagId: '00000000-0000-4000-8000-000000000000' },
          { type: 'attribute', key: 'plan', operator: 'eq', value: 'gold' },
          { type: 'attribute', key: 'plan', operator: 'gt', value: 3 },
          { type: 'group', operator: 'and', rules: [{ type: 'attribute', key: 'born', operator: 'contains', value: '19' }] },
          { type: 'attribute', key: 'untyped', operator: 'before', value: '2024-01-01' },
        ],
      },
    });
    expect(refused.status).toBe(422);
    expect(Object.keys((refused.body as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual([
      'definition.rules[0].tagId',
      'definition.rules[1].value',
      'definition.rules[2].operator',
      'definition.rules[3].rules[0].operator',
      'definition.rules[4].operator',
    ]);
  });

  it('engagement conditions count the human opens and clicks of the contact\'s messages, machine ones never', async () => {
    const { workspaceId, call } = await createTestWorkspace(api);
    const contact = async (address: string) =>
      ((await call('POST', '/contacts', { identities: [{ channel: 'email', address }] })).body as { id: string }).id;
    const [opener, twiceOpener, clicker, proxyOnly] = [await contact('o@example.com'), await contact('oo@example.com'), await contact('c@example.com'), await contact('p@example.com')];
    const campaignId = randomUUID();
    const events: Array<[string, string, string, string | undefined]> = [
      [opener, 'open', 'human', undefined],
      [twiceOpener, 'open', 'human', campaignId],
      [twiceOpener, 'open', 'human', campaignId],
      [clicker, 'click', 'human', undefined],
      [proxyOnly, 'open', 'machine', undefined],
      [proxyOnly, 'click', 'bot', undefined],
    ];
    for (const [contactId, type, classification, campaign] of events) {
      const [messageId] = await queueMessages(api.db, workspaceId, { kind: campaign ? 'campaign' : 'transactional', count: 1, from: 'a@mail.example', campaignId: campaign });
      await api.db.query('UPDATE messages SET contact_id = $2 WHERE id = $1', { bind: [messageId, contactId] });
      await api.db.query('INSERT INTO message_events (id, workspace_id, message_id, type, classification) VALUES ($1, $2, $3, $4, $5)', {
        bind: [randomUUID(), workspaceId, messageId, type, classification],
      });
    }
    const matching = async (rule: object) => {
      const preview = await call('POST', '/segments/preview', { definition: { operator: 'and', rules: [rule] } });
      expect(preview.status).toBe(200);
      return (preview.body as { count: number }).count;
    };
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_least', count: 1 })).toBe(2);
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_least', count: 2 })).toBe(1);
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_least', count: 1, campaignId })).toBe(1);
    expect(await matching({ type: 'engagement', action: 'clicked', operator: 'at_least', count: 1, withinDays: 7 })).toBe(1);
    // Never opened by a person: the clicker and the contact whose only open was a privacy proxy's.
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_most', count: 0 })).toBe(2);
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_most', count: 1 })).toBe(3);
    // Found by the contract suite: at_least 0 matches everyone, with a window and a campaign that bind nothing.
    expect(await matching({ type: 'engagement', action: 'opened', operator: 'at_least', count: 0, withinDays: 1, campaignId })).toBe(4);
  });

  it('the preview counts and samples up to 5 with name and primary email', async () => {
    const call = await workspace();
    for (let index = 0; index < 7; index += 1) {
      await call('POST', '/contacts', {
        identities: [{ channel: 'whatsapp', address: `+1415555010${index}` }, { channel: 'email', address: `p${index}@example.com` }],
        attributes: { plan: index < 6 ? 'pro' : 'free', firstName: `First${index}`, ...(index % 2 ? { lastName: 'Last' } : {}) },
      });
    }
    const preview = await call('POST', '/segments/preview', { definition: planIsPro });
    const body = preview.body as { count: number; sample: Array<{ name: string; email: string }> };
    expect(body.count).toBe(6);
    expect(body.sample).toHaveLength(5);
    for (const row of body.sample) {
      const index = Number(row.email.match(/^p(\d)@/)?.[1]);
      expect(index).toBeLessThan(6);
      expect(row.name).toBe(index % 2 ? `First${index} Last` : `First${index}`);
    }
  });

  it('a preview needs only contacts:read; creating a segment needs contacts:write', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const { apiKey } = await createTestKey(api, workspaceId, ['contacts:read']);
    const call = api.as(apiKey);
    expect((await call('POST', '/segments/preview', { definition: planIsPro })).status).toBe(200);
    expect(await call('POST', '/segments', { name: 'x', definition: planIsPro })).toMatchObject({ status: 403, body: { need: 'contacts:write' } });
  });

  it('the rule tree is documented in the OpenAPI document', async () => {
    const document = (await api.call('GET', '/api/v1/openapi.json')).body as { components: { schemas: Record<string, unknown> } };
    for (const name of ['AudienceRules', 'RuleGroup', 'AttributeCondition', 'IdentityCondition', 'TagCondition', 'ListCondition', 'CreatedCondition', 'EventCondition', 'EngagementCondition']) {
      expect(document.components.schemas[name]).toBeDefined();
    }
  });
});
