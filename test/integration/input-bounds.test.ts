import { randomUUID } from 'node:crypto';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

/** Inputs whose cost grows with their size or depth are bounded before any work is done on them. */
describe('bounded inputs on the send and preview routes', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  /** `{"a":{"a":...1}}`, `levels` deep, written by hand: JSON.stringify itself would overflow the stack. */
  const deeplyNested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

  async function sender() {
    const { apiKey, domain } = await createTestWorkspace(api, { domain: true });
    const email = (fields: Record<string, unknown> = {}) => ({
      from: `a@${domain}`,
      to: 'ann@example.org',
      subject: 'Hello',
      text: 'Hi',
      idempotencyKey: `bounds-${randomUUID()}`,
      ...fields,
    });
    return { apiKey, email };
  }

  it('variables nested 10,000 levels deep answer 422 on POST /emails, not 500', async () => {
    const { apiKey, email } = await sender();
    const raw = JSON.stringify(email({ variables: '__deep__' })).replace('"__deep__"', deeplyNested(10_000));
    const response = await api.call('POST', '/api/v1/emails', { key: apiKey, raw });
    expect(response).toMatchObject({ status: 422, body: { error: { formErrors: ['The body is nested deeper than 32 levels'] } } });
  });

  it('variables nested 11 levels deep answer 422 naming variables', async () => {
    const { apiKey, email } = await sender();
    const raw = JSON.stringify(email({ variables: '__deep__' })).replace('"__deep__"', deeplyNested(11));
    const response = await api.call('POST', '/api/v1/emails', { key: apiKey, raw });
    expect(response).toMatchObject({ status: 422, body: { error: { fieldErrors: { variables: ['Nested deeper than 10 levels'] } } } });
  });

  it('any body nested thousands of levels deep answers 422, not 500 (contact attributes)', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const raw = `{"identities":[{"channel":"email","address":"deep@example.org"}],"attributes":{"x":${deeplyNested(5_000)}}}`;
    const response = await api.call('POST', '/api/v1/contacts', { key: apiKey, raw });
    expect(response).toMatchObject({ status: 422, body: { error: { formErrors: ['The body is nested deeper than 32 levels'] } } });
  });

  it('a batch item with variables nested 20 levels deep fails on its own; the others are accepted', async () => {
    const { apiKey, email } = await sender();
    const raw = JSON.stringify({ emails: [email(), email({ variables: '__deep__' })] }).replace('"__deep__"', deeplyNested(20));
    const response = await api.call('POST', '/api/v1/emails/batch', { key: apiKey, raw });
    expect(response).toMatchObject({
      status: 207,
      body: { accepted: 1, failed: 1, results: [{ index: 0, status: 'accepted' }, { index: 1, status: 'failed', error: { code: 'validation_error' } }] },
    });
  });

  it('variables over 1,000 keys or 64 KB answer 422', async () => {
    const { apiKey, email } = await sender();
    const send = api.as(apiKey);
    const manyKeys = Object.fromEntries(Array.from({ length: 1_001 }, (_, index) => [`k${index}`, 1]));
    expect(await send('POST', '/emails', email({ variables: manyKeys }))).toMatchObject({ status: 422 });
    expect(await send('POST', '/emails', email({ variables: { text: 'x'.repeat(70_000) } }))).toMatchObject({ status: 422 });
    expect(await send('POST', '/emails', email({ variables: { first_name: 'Ann', order: { items: [{ sku: 'A' }] } } }))).toMatchObject({ status: 202 });
  });

  it('a template preview with variables nested 10,000 or 11 levels deep answers 422, not 500', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const template = await api.as(apiKey)('POST', '/templates', { name: `bounds-${randomUUID().slice(0, 8)}`, body: '<p>Hi {{ name }}</p>' });
    expect(template.status).toBe(201);
    const id = (template.body as { id: string }).id;
    const render = (levels: number) => api.call('POST', `/api/v1/templates/${id}/render`, { key: apiKey, raw: `{"variables":${deeplyNested(levels)}}` });
    expect(await render(10_000)).toMatchObject({ status: 422, body: { error: { formErrors: ['The body is nested deeper than 32 levels'] } } });
    expect(await render(11)).toMatchObject({ status: 422, body: { error: { fieldErrors: { variables: ['Nested deeper than 10 levels'] } } } });
  });

  it('an address string over 998 characters, or a list string over 50 of them, answers 422 before it is parsed', async () => {
    const { apiKey, email } = await sender();
    const send = api.as(apiKey);
    const longName = `${'N'.repeat(1_000)} <ann@example.org>`;
    expect(await send('POST', '/emails', email({ to: [longName] }))).toMatchObject({ status: 422, body: { error: { fieldErrors: { to: [expect.stringContaining('998')] } } } });
    expect(await send('POST', '/emails', email({ replyTo: [longName] }))).toMatchObject({ status: 422, body: { error: { fieldErrors: { replyTo: [expect.any(String)] } } } });
    const fromDomain = (email().from as string).split('@')[1];
    expect(await send('POST', '/emails', email({ from: `${'N'.repeat(1_000)} <a@${fromDomain}>` }))).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.any(String)] } } } });
    const megabyteList = 'ann@example.org,'.repeat(65_536);
    for (const field of ['to', 'cc', 'bcc']) {
      const response = await send('POST', '/emails', email({ [field]: megabyteList }));
      expect(response).toMatchObject({ status: 422, body: { error: { fieldErrors: { [field]: [expect.stringContaining('50 addresses')] } } } });
    }
  });
});
