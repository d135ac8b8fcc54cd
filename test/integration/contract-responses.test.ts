import { randomUUID } from 'node:crypto';
import { normaliseCurrency } from '../../core/commerce/money';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

/** What the contract fuzz suite (npm run test:contract) found, each pinned here so jest catches a regression. */
interface Operation {
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const ID = '00000000-0000-4000-8000-000000000000';

describe('answers the OpenAPI document promises', () => {
  let api: ApiHarness;
  let apiKey: string;
  let workspaceId: string;
  let paths: Record<string, Record<string, Operation>>;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
    ({ apiKey, workspaceId } = await createTestWorkspace(api));
    paths = ((await api.call('GET', '/api/v1/openapi.json')).body as { paths: typeof paths }).paths;
  });
  afterAll(() => api.close());

  it('a body that is not JSON on every route that reads one → 400 invalid_json, a status the document lists', async () => {
    const withBody = Object.entries(paths).flatMap(([template, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.requestBody !== undefined)
        .map(([method, operation]) => ({ method: method.toUpperCase(), template, operation })),
    );
    expect(withBody.length).toBeGreaterThan(20);
    for (const { method, template, operation } of withBody) {
      const response = await api.call(method, template.replace(/\{[^}]+\}/g, ID), { key: apiKey, raw: '\u0000' });
      const seen = { method, template, status: response.status, error: (response.body as { error?: unknown }).error, documented: '400' in operation.responses };
      expect(seen).toEqual({ method, template, status: 400, error: 'invalid_json', documented: true });
    }
  });

  it('every documented request body → marked required, as the routes refuse a request without one', async () => {
    const bodies = Object.entries(paths).flatMap(([template, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => (operation.requestBody ? [{ method, template, requestBody: operation.requestBody }] : [])),
    );
    for (const { method, template, requestBody } of bodies) {
      expect({ method, template, requestBody }).toEqual({ method, template, requestBody: expect.objectContaining({ required: true }) });
    }
    const response = await api.call('POST', '/api/v1/tags', { key: apiKey });
    expect(response.status).toBe(422);
  });

  it("a route's own 422 code (template_not_found) → a body the documented 422 schema admits", async () => {
    const domain = (await addTestDomain(api, workspaceId)).domain;
    const response = await api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `hello@${domain}`, to: 'someone@example.org', templateId: 'no-such-template', idempotencyKey: `contract-${randomUUID()}` },
    });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ error: 'template_not_found' });
    const schema = paths['/api/v1/emails'].post.responses['422'].content?.['application/json'].schema;
    // The code-and-message shape is the Error component; a string `error` is not the ValidationError shape.
    expect(schema).toEqual({ anyOf: expect.arrayContaining([{ $ref: '#/components/schemas/Error' }]) });
  });

  it("POST /campaigns naming no template → 422 template_not_found, a body the campaign route's documented 422 admits", async () => {
    const response = await api.call('POST', '/api/v1/campaigns', { key: apiKey, body: { name: 'Spring', templateId: 'no-such-template' } });
    expect(response).toMatchObject({ status: 422, body: { error: 'template_not_found' } });
    const schema = paths['/api/v1/campaigns'].post.responses['422'].content?.['application/json'].schema;
    expect(schema).toEqual({ anyOf: expect.arrayContaining([{ $ref: '#/components/schemas/Error' }]) });
  });

  it('list offsets past 10,000,000 → 422, and the document says so with a maximum', async () => {
    const response = await api.call('GET', '/api/v1/templates?offset=18295127756987876', { key: apiKey });
    expect(response).toMatchObject({ status: 422, body: { error: { fieldErrors: { offset: expect.arrayContaining([expect.stringContaining('10000000')]) } } } });
    for (const path of ['/api/v1/templates', '/api/v1/suppressions', '/api/v1/campaigns', '/api/v1/emails', '/api/v1/attachments']) {
      const parameters = (paths[path].get as unknown as { parameters: Array<{ name: string; schema: { maximum?: number } }> }).parameters;
      expect({ path, maximum: parameters.find((parameter) => parameter.name === 'offset')?.schema.maximum }).toEqual({ path, maximum: 10_000_000 });
    }
  });

  it('the document says NUL and unpaired surrogates are refused, and carries zod\'s rules as patterns', async () => {
    const document = (await api.call('GET', '/api/v1/openapi.json')).body as { info: { description: string }; components: { schemas: Record<string, { properties: Record<string, { pattern?: string }> }> } };
    expect(document.info.description).toContain('unpaired UTF-16 surrogate');
    const schemas = document.components.schemas;
    expect(schemas.CreateTag.properties.name.pattern).toEqual(expect.any(String));
    expect(schemas.CreateSuppression).toMatchObject({ oneOf: expect.any(Array) });
    expect(schemas.SaveTwilioIntegration.properties.whatsappFrom.pattern).toEqual(expect.any(String));
    expect(schemas.CreateAttachment.properties.contentType.pattern).toEqual(expect.any(String));
  });

  it('operations the fuzzer saw refusing most schema-valid data → the document carries the rule the route checks', async () => {
    type Node = { properties: Record<string, { pattern?: string; enum?: string[]; multipleOf?: number }>; allOf?: unknown[] };
    const schemas = ((await api.call('GET', '/api/v1/openapi.json')).body as { components: { schemas: Record<string, Node> } }).components.schemas;
    // A currency is one of the runtime's ISO 4217 codes, each of which the route accepts; an amount has 4 decimals at most.
    const currencies = schemas.CommerceOrderRequest.properties.currency.enum ?? [];
    expect(currencies).toEqual(expect.arrayContaining(['USD', 'EUR', 'JPY']));
    expect(currencies.filter((code) => normaliseCurrency(code) !== code)).toEqual([]);
    expect(schemas.CommerceOrderRequest.properties.total.multipleOf).toBe(0.0001);
    // An email rule's value by its matchType; Matomo's base URL is https.
    expect(JSON.stringify(schemas.CreateEmailRule.allOf)).toContain('"const":"domain"');
    expect(schemas.SaveAnalyticsConnection.properties.baseUrl.pattern).toMatch(/^\^https/);
    // An attribute condition's days only with within_last (segments and journey triggers share it).
    expect(JSON.stringify(schemas.AttributeCondition.allOf)).toContain('"else":{"not":{"required":["days"]}}');
    const { apiKey: orderKey } = await createTestWorkspace(api);
    for (const [currency, total] of [['XOF', 12.3456], ['usd', 0]] as const) {
      const order = await api.call('POST', '/api/v1/commerce/orders', { key: orderKey, body: { externalId: randomUUID(), total, currency, placedAt: new Date().toISOString() } });
      expect({ currency, status: order.status }).toEqual({ currency, status: 202 });
    }
    const rule = await api.call('POST', '/api/v1/email-rules', { key: orderKey, body: { action: 'block', matchType: 'domain', value: 'spam.example.com' } });
    expect(rule.status).toBe(201);
  });

  it('GET /contacts with a page past what PostgreSQL can skip → 422, not a 500', async () => {
    const response = await api.call('GET', '/api/v1/contacts?page=3183984937', { key: apiKey });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ error: { formErrors: [], fieldErrors: { page: [expect.any(String)] } } });
  });
});
