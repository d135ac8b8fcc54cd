import { AppError } from '../../core/errors';
import type { TemplateVersionContent } from '../../core/templates/content';
import { renderTemplate } from '../../core/templates/render';
import { createTemplateRenderer, type TemplateRenderer } from '../../infra/template-renderer';

const version = (content: Partial<TemplateVersionContent>): TemplateVersionContent => ({
  id: 'version-1',
  channels: ['email'],
  format: 'html',
  subject: null,
  body: '',
  channelText: null,
  ...content,
});

const endless = version({ body: '{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}' });
/** Blocks that each build and escape a 20 MB string: liquidjs' 50 MB per piece never trips, the thread's heap does. */
const greedy = version({
  format: 'blocks',
  body: JSON.stringify(
    Array.from({ length: 100 }, () => ({
      type: 'heading',
      text: '{% assign s = "xxxxxxxxxx" %}{% for a in (1..21) %}{% assign s = s | append: s %}{% endfor %}{{ s }}',
    })),
  ),
});

describe('the template renderer (render threads)', () => {
  let renderer: TemplateRenderer;
  beforeAll(() => {
    renderer = createTemplateRenderer({ timeoutMs: 300, memoryMb: 64, threads: 1 });
  });
  afterAll(() => renderer.close());

  it('renders every format exactly as renderTemplate does in process', async () => {
    const versions = [
      version({ subject: 'Hi {{ name }}', body: '<p>{{ name }}</p>', channels: ['email', 'whatsapp'] }),
      version({ format: 'markdown', body: '# {{ name }}\n\n{% for i in (1..3) %}- {{ i }}\n{% endfor %}' }),
      version({ format: 'text', body: 'Hello {{ name }}', channels: ['telegram'], channelText: { telegram: 'Yo {{ name }}' } }),
      version({ format: 'blocks', body: JSON.stringify([{ type: 'heading', text: 'Hi {{ name }}' }, { type: 'button', label: 'Go', url: 'https://example.com/{{ name }}' }]) }),
    ];
    for (const content of versions) {
      expect(await renderer.render(content, { name: 'Ada <3' })).toEqual(renderTemplate(content, { name: 'Ada <3' }));
    }
  });

  it('a template error crosses the thread as the same AppError, with field, line and column', async () => {
    const failure = renderer.render(version({ subject: 'Hi', body: '<p>ok</p>\n<p>{{ missing }}</p>' }), {}, { strict: true });
    await expect(failure).rejects.toBeInstanceOf(AppError);
    await expect(failure).rejects.toMatchObject({ code: 'template_invalid', details: { field: 'body', line: 2, column: 7 } });
  });

  it('a render over its time budget is stopped near the budget, and the next render gets a fresh thread', async () => {
    const start = performance.now();
    await expect(renderer.render(endless, {})).rejects.toMatchObject({ code: 'template_invalid', message: expect.stringContaining('render budget (300 ms)') });
    expect(performance.now() - start).toBeLessThan(300 + 1_000);
    expect((await renderer.render(version({ body: '<p>{{ n }}</p>' }), { n: 1 })).html).toBe('<p>1</p>');
  });

  it('the wait for a busy thread does not count against the next render\'s budget', async () => {
    const start = performance.now();
    const first = renderer.render(endless, {});
    const second = renderer.render(version({ body: '<p>{{ n }}</p>' }), { n: 2 });
    await expect(first).rejects.toMatchObject({ code: 'template_invalid' });
    expect((await second).html).toBe('<p>2</p>');
    // It waited for the first render's budget and a replacement thread, longer than its own budget.
    expect(performance.now() - start).toBeGreaterThan(300);
  });

  it('a render over its memory budget is stopped before the thread\'s heap fills, and the process renders on', async () => {
    const patient = createTemplateRenderer({ timeoutMs: 60_000, memoryMb: 64, threads: 1 });
    try {
      // An eighth of the thread's 64 MB, in characters: the render stops on its own count, long before V8's
      // heap limit (which, reached in a thread, can take the whole process down: CI's jest worker died of it).
      await expect(patient.render(greedy, {})).rejects.toMatchObject({
        code: 'template_invalid',
        message: expect.stringContaining(`render budget (${(64 * 1024 * 1024) / 8} characters of memory)`),
      });
      expect((await patient.render(version({ body: '<p>{{ n }}</p>' }), { n: 3 })).html).toBe('<p>3</p>');
    } finally {
      await patient.close();
    }
  });
});
