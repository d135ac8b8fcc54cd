import { randomUUID } from 'node:crypto';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

interface DocumentedOperation {
  method: string;
  /** The path with every `{param}` filled by a well-formed id that names nothing. */
  path: string;
  /** The document's own path, with `{param}` placeholders. */
  template: string;
  takesBody: boolean;
}

const ID = '00000000-0000-4000-8000-000000000000';

/** Every operation of the served OpenAPI document, so routes added later are walked without editing this file. */
async function documentedOperations(api: ApiHarness): Promise<DocumentedOperation[]> {
  const response = await api.call('GET', '/api/v1/openapi.json');
  const document = response.body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  return Object.entries(document.paths).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: template.replace(/\{[^}]+\}/g, ID),
      template,
      takesBody: operation.requestBody !== undefined,
    })),
  );
}

const unsafeTextError = (field: string) => ({
  error: { formErrors: [], fieldErrors: { [field]: [expect.stringMatching(/NUL character or an unpaired surrogate/)] } },
});

describe('hostile input at the edge', () => {
  let api: ApiHarness;
  let operations: DocumentedOperation[];
  let apiKey: string;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
    operations = await documentedOperations(api);
    ({ apiKey } = await createTestWorkspace(api));
  });
  afterAll(() => api.close());

  it('a NUL deep in the body of every route that reads one answers 422 naming the field', async () => {
    for (const operation of operations.filter((candidate) => candidate.takesBody)) {
      const response = await api.call(operation.method, operation.path, { key: apiKey, body: { outer: { list: ['fine', 'bad\u0000'] } } });
      expect({ operation, status: response.status, body: response.body }).toEqual({ operation, status: 422, body: unsafeTextError('outer.list.1') });
    }
  });

  it('a lone surrogate in a body key or value of every route that reads one answers 422', async () => {
    for (const operation of operations.filter((candidate) => candidate.takesBody)) {
      // JSON.stringify would escape the surrogate as \ud800 too; written raw so the test does not depend on it.
      for (const raw of ['{"name": "\\ud800"}', '{"nested": {"\\udc00key": 1}}']) {
        const response = await api.call(operation.method, operation.path, { key: apiKey, raw });
        const field = raw.includes('nested') ? 'nested' : 'name';
        expect({ operation, raw, status: response.status, body: response.body }).toEqual({ operation, raw, status: 422, body: unsafeTextError(field) });
      }
    }
  });

  it('a NUL in the query string of every route answers 422 naming the parameter', async () => {
    for (const operation of operations) {
      const response = await api.call(operation.method, `${operation.path}?search=a%00b`, {
        key: apiKey,
        body: operation.takesBody ? {} : undefined,
      });
      expect({ operation, status: response.status, body: response.body }).toEqual({ operation, status: 422, body: unsafeTextError('search') });
    }
  });

  it('a NUL in the subject of an otherwise valid send answers 422 and stores nothing', async () => {
    const workspace = await createTestWorkspace(api, { domain: true });
    const { domain } = workspace;
    const idempotencyKey = `nul-${randomUUID()}`;
    const response = await api.as(workspace.apiKey)('POST', '/emails', {
      from: `hello@${domain}`,
      to: 'someone@example.org',
      subject: 'Hi\u0000there',
      text: 'T',
      idempotencyKey,
    });
    expect(response).toMatchObject({ status: 422, body: unsafeTextError('subject') });
    const [rows] = await api.db.query('SELECT count(*)::int AS n FROM messages WHERE workspace_id = $1', { bind: [workspace.workspaceId] });
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('a well-formed surrogate pair (an emoji) is accepted as text', async () => {
    const response = await api.as(apiKey)('POST', '/tags', { name: `party 🎉 ${randomUUID().slice(0, 8)}` });
    expect(response.status).toBe(201);
  });

  it.each([
    ['a string', '"AAA"'],
    ['a number', '42'],
    ['null', 'null'],
    ['an array', '[1, 2]'],
  ])('a JSON body that is %s where an object is expected answers 422 with the validation shape', async (_kind, raw) => {
    const response = await api.call('POST', '/api/v1/tags', { key: apiKey, raw });
    expect(response).toMatchObject({ status: 422, body: { error: { formErrors: [expect.any(String)], fieldErrors: {} } } });
  });

  it('on every path of the document, each method it lacks answers 405 with Allow exactly the document\'s methods', async () => {
    const byPath = new Map<string, { path: string; methods: string[] }>();
    for (const operation of operations) {
      const entry = byPath.get(operation.template) ?? { path: operation.path, methods: [] };
      entry.methods.push(operation.method);
      byPath.set(operation.template, entry);
    }
    const order = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    // Literal paths beside a parameterised one (/emails/batch and /emails/{id}, /segments/preview and
    // /segments/{id}) are where a method used to reach the other route and answer 404 or advertise its methods.
    for (const [template, { path, methods }] of byPath) {
      const allow = order.filter((method) => methods.includes(method)).join(', ');
      for (const missing of [...order, 'OPTIONS'].filter((method) => !methods.includes(method))) {
        const response = await api.call(missing, path, { key: apiKey, body: missing === 'GET' ? undefined : {} });
        expect({ template, missing, status: response.status, allow: response.headers.get('allow'), body: response.body }).toEqual({
          template,
          missing,
          status: 405,
          allow,
          body: { error: 'method_not_allowed', message: expect.any(String) },
        });
      }
    }
  });

  it('PUT or OPTIONS on /api-keys answers 405 with exactly GET and POST allowed, even without a key', async () => {
    for (const method of ['PUT', 'OPTIONS']) {
      const response = await api.call(method, '/api/v1/api-keys', {});
      expect({ method, status: response.status, allow: response.headers.get('allow') }).toEqual({ method, status: 405, allow: 'GET, POST' });
    }
  });

  it('an unknown path keeps answering 404 for any method', async () => {
    for (const method of ['GET', 'POST', 'PATCH']) {
      const response = await api.call(method, '/api/v1/no-such-thing', { key: apiKey });
      expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
  });
});
