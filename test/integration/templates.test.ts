import { QueryTypes } from 'sequelize';
import { findTemplateByIdOrName, findTemplateVersion } from '../../db/repositories/templates';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';

interface TemplateBody {
  id: string;
  name: string;
  channel: string;
  channels: string[];
  format: string;
  subject: string | null;
  variables: string[];
  body: string;
  channelText: Record<string, string> | null;
  createdAt: string;
  updatedAt: string;
}

describe('templates over HTTP', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function createTemplate(workspace: TestWorkspace, body: Record<string, unknown>): Promise<TemplateBody> {
    const response = await api.call('POST', '/api/v1/templates', { key: workspace.apiKey, body });
    expect(response.status).toBe(201);
    return response.body as TemplateBody;
  }

  it('creating returns the template with derived variables and primary channel; GET and the list show it', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, {
      name: 'Welcome',
      channels: ['whatsapp', 'email'],
      format: 'markdown',
      subject: 'Welcome, {{ first_name | default: "there" }}',
      body: '# Hi {{ first_name }}\n\nYour plan: {{ plan.name }}',
      channelText: { whatsapp: 'Hi {{ first_name }}, reply {{ code }}' },
    });
    expect(created).toEqual({
      id: expect.any(String),
      name: 'Welcome',
      channel: 'email',
      channels: ['whatsapp', 'email'],
      format: 'markdown',
      subject: 'Welcome, {{ first_name | default: "there" }}',
      variables: ['first_name', 'plan.name', 'code'],
      body: '# Hi {{ first_name }}\n\nYour plan: {{ plan.name }}',
      channelText: { whatsapp: 'Hi {{ first_name }}, reply {{ code }}' },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await api.call('GET', `/api/v1/templates/${created.id}`, { key: workspace.apiKey })).body).toEqual(created);
    const list = await api.call('GET', '/api/v1/templates', { key: workspace.apiKey });
    const summary = Object.fromEntries(Object.entries(created).filter(([field]) => field !== 'body' && field !== 'channelText'));
    expect(list.body).toEqual({ templates: [summary] });
  });

  it('defaults: an html template for email', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Plain', body: '<p>Hi</p>' });
    expect(created).toMatchObject({ channel: 'email', channels: ['email'], format: 'html', subject: null, channelText: null, variables: [] });
  });

  it('a blocks body may be sent as the array itself and comes back as JSON text', async () => {
    const workspace = await createTestWorkspace(api);
    const blocks = [{ type: 'heading', text: 'Hi {{ name }}' }, { type: 'button', label: 'Go', url: 'https://example.com' }];
    const created = await createTemplate(workspace, { name: 'Blocks', format: 'blocks', body: blocks });
    expect(JSON.parse(created.body)).toEqual(blocks);
    expect(created.variables).toEqual(['name']);
  });

  it('names are unique in a workspace whatever their case, and free in another workspace', async () => {
    const workspace = await createTestWorkspace(api);
    await createTemplate(workspace, { name: 'Receipt', body: 'x', format: 'text' });
    const again = await api.call('POST', '/api/v1/templates', { key: workspace.apiKey, body: { name: 'RECEIPT', body: 'y', format: 'text' } });
    expect(again).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const other = await createTestWorkspace(api);
    await createTemplate(other, { name: 'receipt', body: 'z', format: 'text' });
  });

  it('a name shaped like a uuid is refused: a send could not tell it from an id', async () => {
    const workspace = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/templates', {
      key: workspace.apiKey,
      body: { name: '0b4e7a52-5f3c-4d2b-9a51-3f0e2c1d7a66', body: 'x' },
    });
    expect(response.status).toBe(422);
    expect((response.body as { error: { fieldErrors: Record<string, string[]> } }).error.fieldErrors.name).toBeDefined();
  });

  it('a Liquid syntax error answers 422 template_invalid pointing at the line, and nothing is saved', async () => {
    const workspace = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/templates', {
      key: workspace.apiKey,
      body: { name: 'Broken', body: '<p>Hello</p>\n<p>{{ name </p>' },
    });
    expect(response).toMatchObject({
      status: 422,
      body: { error: 'template_invalid', field: 'body', line: 2, column: 4, message: expect.stringContaining('not closed') },
    });
    expect((await api.call('GET', '/api/v1/templates', { key: workspace.apiKey })).body).toEqual({ templates: [] });
  });

  it('PATCH changes only the fields given and keeps every version', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Order', subject: 'Order {{ id }}', body: '<p>{{ id }}</p>' });
    const renamed = await api.call('PATCH', `/api/v1/templates/${created.id}`, { key: workspace.apiKey, body: { name: 'Order shipped' } });
    expect(renamed.body).toMatchObject({ name: 'Order shipped', subject: 'Order {{ id }}', body: '<p>{{ id }}</p>' });

    const edited = await api.call('PATCH', `/api/v1/templates/${created.id}`, {
      key: workspace.apiKey,
      body: { body: '<p>{{ id }} ships on {{ date }}</p>', channels: ['email', 'telegram'], channelText: { telegram: 'Shipped {{ id }}' } },
    });
    expect(edited.body).toMatchObject({
      name: 'Order shipped',
      subject: 'Order {{ id }}',
      channels: ['email', 'telegram'],
      variables: ['id', 'date'],
      channelText: { telegram: 'Shipped {{ id }}' },
    });
    const cleared = await api.call('PATCH', `/api/v1/templates/${created.id}`, { key: workspace.apiKey, body: { subject: null } });
    expect(cleared.body).toMatchObject({ subject: null, body: '<p>{{ id }} ships on {{ date }}</p>' });

    const versions = await api.db.query<{ version: number; subject: string | null; body: string }>(
      'SELECT version, subject, body FROM template_versions WHERE template_id = $1 ORDER BY version',
      { bind: [created.id], type: QueryTypes.SELECT },
    );
    // The rename made no version; the two content changes did.
    expect(versions).toEqual([
      { version: 1, subject: 'Order {{ id }}', body: '<p>{{ id }}</p>' },
      { version: 2, subject: 'Order {{ id }}', body: '<p>{{ id }} ships on {{ date }}</p>' },
      { version: 3, subject: null, body: '<p>{{ id }} ships on {{ date }}</p>' },
    ]);
  });

  it('concurrent PATCHes of different fields both land, with versions numbered without gaps', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Race', subject: 'A', body: '<p>A</p>' });
    await Promise.all([
      api.call('PATCH', `/api/v1/templates/${created.id}`, { key: workspace.apiKey, body: { subject: 'B' } }),
      api.call('PATCH', `/api/v1/templates/${created.id}`, { key: workspace.apiKey, body: { body: '<p>B</p>' } }),
    ]);
    expect((await api.call('GET', `/api/v1/templates/${created.id}`, { key: workspace.apiKey })).body).toMatchObject({
      subject: 'B',
      body: '<p>B</p>',
    });
    const versions = await api.db.query<{ version: number }>('SELECT version FROM template_versions WHERE template_id = $1 ORDER BY version', {
      bind: [created.id],
      type: QueryTypes.SELECT,
    });
    expect(versions.map((row) => row.version)).toEqual([1, 2, 3]);
  });

  it('PATCH is checked like a create: a rename onto another template\'s name is 409, a stray chat text 422', async () => {
    const workspace = await createTestWorkspace(api);
    await createTemplate(workspace, { name: 'First', body: 'x', format: 'text' });
    const second = await createTemplate(workspace, { name: 'Second', body: 'y', format: 'text' });
    const clash = await api.call('PATCH', `/api/v1/templates/${second.id}`, { key: workspace.apiKey, body: { name: 'first' } });
    expect(clash).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const stray = await api.call('PATCH', `/api/v1/templates/${second.id}`, { key: workspace.apiKey, body: { channelText: { whatsapp: 'hi' } } });
    expect(stray.status).toBe(422);
  });

  it('DELETE removes the template from reads and frees its name; its versions stay for messages', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Old', body: '<p>old</p>' });
    const version = await findTemplateByIdOrName(api.db, workspace.workspaceId, created.id);
    expect(await api.call('DELETE', `/api/v1/templates/${created.id}`, { key: workspace.apiKey })).toMatchObject({
      status: 200,
      body: { deleted: true, id: created.id },
    });
    expect((await api.call('GET', `/api/v1/templates/${created.id}`, { key: workspace.apiKey })).status).toBe(404);
    expect((await api.call('DELETE', `/api/v1/templates/${created.id}`, { key: workspace.apiKey })).status).toBe(404);
    await createTemplate(workspace, { name: 'old', body: '<p>new</p>' });
    expect(await findTemplateVersion(api.db, workspace.workspaceId, version?.versionId ?? '')).toMatchObject({ body: '<p>old</p>', version: 1 });
  });

  it('render previews subject, HTML, text and chat texts with the given variables', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, {
      name: 'Preview',
      channels: ['email', 'whatsapp'],
      subject: 'Hi {{ first_name | default: "there" }}',
      body: '<p>Hello {{ first_name }}, <a href="{{ url }}">open</a></p>',
    });
    const preview = await api.call('POST', `/api/v1/templates/${created.id}/render`, {
      key: workspace.apiKey,
      body: { variables: { first_name: 'Ada <3', url: 'https://example.com/x' } },
    });
    expect(preview).toMatchObject({
      status: 200,
      body: {
        subject: 'Hi Ada <3',
        html: '<p>Hello Ada &lt;3, <a href="https://example.com/x">open</a></p>',
        text: 'Hello Ada <3, open [https://example.com/x]',
        channelText: { whatsapp: 'Hello Ada <3, open [https://example.com/x]' },
      },
    });
    const strict = await api.call('POST', `/api/v1/templates/${created.id}/render`, { key: workspace.apiKey, body: { strict: true } });
    expect(strict).toMatchObject({ status: 422, body: { error: 'template_invalid', field: 'body', line: 1 } });
  });

  it('a send may name a template by id or by name in any case', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Password Reset', body: '<p>reset</p>' });
    expect((await findTemplateByIdOrName(api.db, workspace.workspaceId, created.id))?.id).toBe(created.id);
    expect((await findTemplateByIdOrName(api.db, workspace.workspaceId, 'password reset'))?.id).toBe(created.id);
    expect(await findTemplateByIdOrName(api.db, workspace.workspaceId, 'Unknown')).toBeNull();
    const other = await createTestWorkspace(api);
    expect(await findTemplateByIdOrName(api.db, other.workspaceId, created.id)).toBeNull();
    expect(await findTemplateByIdOrName(api.db, other.workspaceId, 'Password Reset')).toBeNull();
  });

  it('another workspace\'s template answers 404 on every route', async () => {
    const owner = await createTestWorkspace(api);
    const created = await createTemplate(owner, { name: 'Mine', body: '<p>x</p>' });
    const stranger = await createTestWorkspace(api);
    for (const [method, path, body] of [
      ['GET', `/api/v1/templates/${created.id}`, undefined],
      ['PATCH', `/api/v1/templates/${created.id}`, { name: 'Theirs' }],
      ['DELETE', `/api/v1/templates/${created.id}`, undefined],
      ['POST', `/api/v1/templates/${created.id}/render`, {}],
    ] as const) {
      expect((await api.call(method, path, { key: stranger.apiKey, body })).status).toBe(404);
    }
    expect((await api.call('GET', '/api/v1/templates', { key: stranger.apiKey })).body).toEqual({ templates: [] });
  });

  it('templates:read may list, read and preview but not write', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createTemplate(workspace, { name: 'Scoped', body: '<p>x</p>' });
    const { apiKey } = await createTestKey(api, workspace.workspaceId, ['templates:read']);
    expect((await api.call('GET', `/api/v1/templates/${created.id}`, { key: apiKey })).status).toBe(200);
    expect((await api.call('POST', `/api/v1/templates/${created.id}/render`, { key: apiKey, body: {} })).status).toBe(200);
    expect(await api.call('POST', '/api/v1/templates', { key: apiKey, body: { name: 'No', body: 'x' } })).toMatchObject({
      status: 403,
      body: { error: 'forbidden', need: 'templates:write' },
    });
  });

  it('the list is newest first and pages with limit and offset', async () => {
    const workspace = await createTestWorkspace(api);
    for (const name of ['one', 'two', 'three']) await createTemplate(workspace, { name, body: 'x', format: 'text' });
    const page = await api.call('GET', '/api/v1/templates?limit=2&offset=1', { key: workspace.apiKey });
    expect((page.body as { templates: Array<{ name: string }> }).templates.map((template) => template.name)).toEqual(['two', 'one']);
  });
});
