import { PermanentSendError } from '../../core/delivery';
import { createEmailRenderer } from '../../activities/email-render';
import { trackingKey } from '../../core/tracking/tokens';
import { findMessage } from '../../db/repositories/messages';
import { createTemplateRenderer, type TemplateRenderer } from '../../infra/template-renderer';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { addTestDomain, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';

const BUDGET_MS = 300;
const tracking = { baseUrl: 'https://track.example', key: trackingKey(Buffer.alloc(32, 1)) };

/** A hundred blocks of about 160 ms of loops each: no piece comes near liquidjs' own 2 s limit, the whole takes 16 s. */
const slowBlock = { type: 'heading', text: '{% for a in (1..600) %}{% for b in (1..600) %}{% endfor %}{% endfor %}Slow' };
const SLOW_BLOCKS = Array.from({ length: 100 }, () => slowBlock);

/** Each block doubles a string to 20 MB (under liquidjs' 50 MB per piece) and escapes it into the page. */
const bigBlock = { type: 'heading', text: '{% assign s = "xxxxxxxxxx" %}{% for a in (1..21) %}{% assign s = s | append: s %}{% endfor %}{{ s }}' };
const BIG_BLOCKS = Array.from({ length: 100 }, () => bigBlock);

describe('the render budget of a template', () => {
  let api: ApiHarness;
  let workspace: TestWorkspace;
  let normalId: string;

  async function createTemplate(body: Record<string, unknown>): Promise<string> {
    const response = await api.call('POST', '/api/v1/templates', { key: workspace.apiKey, body });
    expect(response.status).toBe(201);
    return (response.body as { id: string }).id;
  }

  const preview = (id: string, variables: Record<string, unknown> = {}) =>
    api.call('POST', `/api/v1/templates/${id}/render`, { key: workspace.apiKey, body: { variables } });

  async function timed<T>(work: Promise<T>): Promise<{ result: T; ms: number }> {
    const start = performance.now();
    const result = await work;
    return { result, ms: performance.now() - start };
  }

  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TEMPLATE_RENDER_TIMEOUT_MS: String(BUDGET_MS) });
    workspace = await createTestWorkspace(api);
    normalId = await createTemplate({ name: 'Normal', subject: 'Hi {{ name }}', body: '<p>Hello {{ name }}</p>' });
    // The render threads start with the first render; a process that has rendered once has them.
    expect((await preview(normalId, { name: 'warm' })).status).toBe(200);
  });
  afterAll(() => api.close());

  it('a blocks template over its budget answers 422 template_invalid within the budget, and the API answers others meanwhile', async () => {
    const slowId = await createTemplate({ name: 'Slow blocks', format: 'blocks', subject: 'Slow', body: SLOW_BLOCKS });

    const hostile = timed(preview(slowId));
    // Timed from when it is due, not from when it leaves: a blocked event loop would also delay its start.
    const due = performance.now() + 100;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const other = await api.call('GET', '/api/v1/templates', { key: workspace.apiKey });
    const otherMs = performance.now() - due;
    const { result, ms } = await hostile;

    expect(other.status).toBe(200);
    expect(otherMs).toBeLessThan(100);
    expect(result).toMatchObject({
      status: 422,
      body: { error: 'template_invalid', message: expect.stringContaining('render budget'), field: null, line: null, column: null },
    });
    expect(ms).toBeLessThan(BUDGET_MS + 1_500);
  });

  it('a template that eats memory is stopped with 422, and the next preview renders as before', async () => {
    const bigId = await createTemplate({ name: 'Big blocks', format: 'blocks', subject: 'Big', body: BIG_BLOCKS });

    const { result, ms } = await timed(preview(bigId));

    expect(result).toMatchObject({ status: 422, body: { error: 'template_invalid', message: expect.stringContaining('render budget') } });
    expect(ms).toBeLessThan(BUDGET_MS + 1_500);
    expect(await preview(normalId, { name: 'Ada <3' })).toMatchObject({
      status: 200,
      body: { subject: 'Hi Ada <3', html: '<p>Hello Ada &lt;3</p>', text: 'Hello Ada <3' },
    });
  });

  describe('at send time', () => {
    let templates: TemplateRenderer;
    beforeAll(() => {
      templates = createTemplateRenderer({ timeoutMs: BUDGET_MS, memoryMb: 64, threads: 1 });
    });
    afterAll(() => templates.close());

    async function acceptedWith(templateId: string, variables: Record<string, unknown> = {}) {
      const domain = (await addTestDomain(api, workspace.workspaceId)).domain;
      const start = performance.now();
      const accepted = await api.call('POST', '/api/v1/emails', {
        key: workspace.apiKey,
        body: { from: `hi@${domain}`, to: 'ann@example.org', templateId, variables, idempotencyKey: `budget-${templateId}` },
      });
      expect(accepted.status).toBe(202);
      // Acceptance pins the template version; it does not render.
      expect(performance.now() - start).toBeLessThan(1_000);
      const message = await findMessage(api.db, workspace.workspaceId, (accepted.body as { id: string }).id);
      if (!message) throw new Error('the accepted message is not stored');
      return message;
    }

    it('a template over its budget is a permanent send failure', async () => {
      const slowId = await createTemplate({ name: 'Slow send', format: 'blocks', subject: 'Slow', body: SLOW_BLOCKS });
      const render = createEmailRenderer(api.db, templates, tracking);

      const failure = render(await acceptedWith(slowId));

      await expect(failure).rejects.toBeInstanceOf(PermanentSendError);
      await expect(failure).rejects.toThrow(/render budget/);
    });

    it('a normal template renders on the threads as it did in the activity', async () => {
      const render = createEmailRenderer(api.db, templates, tracking);
      const message = await acceptedWith(normalId, { name: 'Bo' });
      expect(await render(message)).toEqual({
        subject: 'Hi Bo',
        // Tracked as any HTML send: the honeypot link and the open pixel follow the content.
        html: expect.stringMatching(/^<p>Hello Bo<\/p><a href="https:\/\/track\.example\/t\/c\/[^"]+"[^>]*><\/a><img src="https:\/\/track\.example\/t\/o\//),
        text: 'Hello Bo',
        headers: {},
        templateVersionId: message.content.templateVersionId,
        links: [expect.objectContaining({ linkId: 'honeypot', honeypot: true })],
      });
    });
  });
});
