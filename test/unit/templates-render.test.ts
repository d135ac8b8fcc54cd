import { AppError } from '../../core/errors';
import { analyseTemplate } from '../../core/templates/analyse';
import { primaryChannel, type TemplateVersionContent } from '../../core/templates/content';
import { htmlToPlainText } from '../../core/templates/plain-text';
import { renderTemplate } from '../../core/templates/render';

function version(content: Partial<TemplateVersionContent>): TemplateVersionContent {
  return { id: 'version-1', channels: ['email'], format: 'html', subject: null, body: '<p>x</p>', channelText: null, ...content };
}

function thrown(work: () => unknown): AppError {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('variables are derived from the content', () => {
  it('subject, body and chat texts contribute, in order of first use, each once', () => {
    const { variables } = analyseTemplate({
      channels: ['email', 'whatsapp'],
      format: 'html',
      subject: 'Order {{ order.id }} for {{ first_name }}',
      body: '<p>Hi {{ first_name | default: "there" }}, total {{ order.total }}</p>',
      channelText: { whatsapp: 'Track it: {{ tracking_url }}' },
    });
    expect(variables).toEqual(['order.id', 'first_name', 'order.total', 'tracking_url']);
  });

  it('loop variables, assigns and forloop belong to the template, not the caller', () => {
    const { variables } = analyseTemplate({
      channels: ['email'],
      format: 'text',
      subject: null,
      body: '{% assign greeting = "Hello" %}{{ greeting }} {% for item in items %}{{ item.name }} {{ forloop.index }}{% endfor %}',
      channelText: null,
    });
    expect(variables).toEqual(['items']);
  });

  it('a blocks body contributes the variables of every block, columns included', () => {
    const body = JSON.stringify([
      { type: 'heading', text: 'Hi {{ first_name }}' },
      { type: 'button', label: 'Open', url: '{{ links.app }}' },
      { type: 'columns', columns: [{ blocks: [{ type: 'text', text: '{{ left }}' }] }, { blocks: [{ type: 'footer', text: '{{ right }}' }] }] },
    ]);
    expect(analyseTemplate({ channels: ['email'], format: 'blocks', subject: null, body, channelText: null }).variables).toEqual([
      'first_name',
      'links.app',
      'left',
      'right',
    ]);
  });
});

describe('mistakes are caught when a template is saved', () => {
  it('a Liquid syntax error is template_invalid with the field, line and column', () => {
    const error = thrown(() => analyseTemplate({ ...version({}), body: '<p>line one</p>\n<p>{% if vip %}VIP</p>' }));
    expect(error.code).toBe('template_invalid');
    expect(error.details).toEqual({ field: 'body', line: 2, column: 4 });
    expect(error.message).toMatch(/^body: tag \{% if vip %\} not closed/);
  });

  it('an unknown filter is refused rather than silently ignored', () => {
    const error = thrown(() => analyseTemplate({ ...version({}), subject: 'Hi {{ name | shout }}' }));
    expect(error).toMatchObject({ code: 'template_invalid', details: { field: 'subject', line: 1, column: 4 } });
  });

  it('include, render and layout are refused: a template cannot read files', () => {
    for (const tag of ['{% include "/etc/passwd" %}', '{% render "x" %}', '{% layout "base" %}']) {
      expect(thrown(() => analyseTemplate({ ...version({}), body: tag })).code).toBe('template_invalid');
    }
  });

  it('a chat text for a channel the template does not serve is a validation error', () => {
    const error = thrown(() => analyseTemplate({ ...version({}), channelText: { telegram: 'hi' } }));
    expect(error.code).toBe('validation_error');
  });

  it('a blocks body that is not JSON points at the line', () => {
    const error = thrown(() => analyseTemplate({ ...version({ format: 'blocks' }), body: '[\n  { "type": "divider" },\n  oops\n]' }));
    expect(error).toMatchObject({ code: 'template_invalid', details: { field: 'body', line: 3, column: 3 } });
    const trailing = thrown(() => analyseTemplate({ ...version({ format: 'blocks' }), body: '[\n  { "type": "divider" },\n]' }));
    expect(trailing.details).toEqual({ field: 'body', line: 3, column: 1 });
  });

  it('an unknown block type or a stray field names the block', () => {
    const unknown = thrown(() => analyseTemplate({ ...version({ format: 'blocks' }), body: '[{"type":"divider"},{"type":"video"}]' }));
    expect(unknown).toMatchObject({ code: 'template_invalid', details: { field: 'body[1].type' } });
    const stray = thrown(() => analyseTemplate({ ...version({ format: 'blocks' }), body: '[{"type":"heading","text":"x","colour":"red"}]' }));
    expect(stray).toMatchObject({ code: 'template_invalid', details: { field: 'body[0]' } });
  });

  it('a literal button link must be a web, mail or phone link', () => {
    const body = JSON.stringify([{ type: 'button', label: 'Go', url: 'javascript:alert(1)' }]);
    expect(thrown(() => analyseTemplate({ ...version({ format: 'blocks' }), body }))).toMatchObject({
      code: 'template_invalid',
      details: { field: 'body[0].url' },
    });
  });
});

describe('rendering escapes variables in HTML and nowhere else', () => {
  const hostile = { name: '<script>alert("x")</script> & co' };

  it('html: a variable cannot inject markup', () => {
    const rendered = renderTemplate(version({ body: '<p>Hi {{ name }}</p>' }), hostile);
    expect(rendered.html).toBe('<p>Hi &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co</p>');
  });

  it('html: | raw is the explicit way out', () => {
    expect(renderTemplate(version({ body: '<p>{{ snippet | raw }}</p>' }), { snippet: '<b>bold</b>' }).html).toBe('<p><b>bold</b></p>');
  });

  it('subject and text format keep characters as they are; a subject stays one line', () => {
    const rendered = renderTemplate(version({ format: 'text', subject: 'For {{ name }}\r\nBcc: x@example.com', body: 'Hi {{ name }}' }), hostile);
    expect(rendered.subject).toBe('For <script>alert("x")</script> & co Bcc: x@example.com');
    expect(rendered.text).toBe('Hi <script>alert("x")</script> & co');
    expect(rendered.html).toBeNull();
  });

  it('returns the version that rendered it', () => {
    expect(renderTemplate(version({ id: 'v-42' }), {}).versionId).toBe('v-42');
  });
});

describe('fallbacks and strict variables', () => {
  const greeting = version({ format: 'text', body: 'Hi {{ first_name | default: "there" }}' });

  it('default fills a missing or empty variable', () => {
    expect(renderTemplate(greeting, {}).text).toBe('Hi there');
    expect(renderTemplate(greeting, { first_name: '' }).text).toBe('Hi there');
    expect(renderTemplate(greeting, { first_name: 'Ada' }).text).toBe('Hi Ada');
  });

  it('without strict, a missing variable renders empty', () => {
    expect(renderTemplate(version({ format: 'text', body: 'Code: {{ code }}.' }), {}).text).toBe('Code: .');
  });

  it('under strict, a missing variable is template_invalid with its line; default and if still work', () => {
    const error = thrown(() => renderTemplate(version({ format: 'text', body: 'Hi\n{{ code }}' }), {}, { strict: true }));
    expect(error).toMatchObject({ code: 'template_invalid', details: { field: 'body', line: 2, column: 4 } });
    expect(renderTemplate(greeting, {}, { strict: true }).text).toBe('Hi there');
    expect(renderTemplate(version({ format: 'text', body: '{% if vip %}VIP{% endif %}ok' }), {}, { strict: true }).text).toBe('ok');
  });

  it('filters work on values', () => {
    const rendered = renderTemplate(version({ format: 'text', body: '{{ name | upcase }} {{ n | plus: 1 }} {{ when | date: "%Y-%m-%d" }}' }), {
      name: 'ada',
      n: 41,
      when: '2026-03-01T23:30:00Z',
    });
    expect(rendered.text).toBe('ADA 42 2026-03-01');
  });
});

describe('markdown', () => {
  it('renders to HTML in the email layout, with variables escaped', () => {
    const rendered = renderTemplate(version({ format: 'markdown', body: '# Hi {{ name }}\n\nYour **order** is [here]({{ url }}).\n\n- one\n- two' }), {
      name: '<Ada>',
      url: 'https://shop.example/o?id=1&x=2',
    });
    expect(rendered.html).toContain('<h1 style=');
    expect(rendered.html).toContain('Hi &lt;Ada&gt;</h1>');
    expect(rendered.html).toContain('<strong>order</strong>');
    expect(rendered.html).toContain('href="https://shop.example/o?id=1&amp;x=2"');
    expect(rendered.html).toMatch(/<li>one<\/li>\s*<li>two<\/li>/);
    expect(rendered.text).toContain('Hi <Ada>');
    expect(rendered.text).toContain('here [https://shop.example/o?id=1&x=2]');
  });
});

describe('channels', () => {
  it('email is the primary channel when enabled, otherwise the first listed', () => {
    expect(primaryChannel(['whatsapp', 'email'])).toBe('email');
    expect(primaryChannel(['telegram', 'whatsapp'])).toBe('telegram');
  });

  it('a chat channel gets its override, or the plain text when it has none; email-only templates have none', () => {
    const rendered = renderTemplate(
      version({ channels: ['email', 'whatsapp', 'telegram'], body: '<p>Hello {{ name }}</p>', channelText: { whatsapp: '*Hello* {{ name }}' } }),
      { name: 'Ada' },
    );
    expect(rendered.channelText).toEqual({ whatsapp: '*Hello* Ada', telegram: 'Hello Ada' });
    expect(renderTemplate(version({}), {}).channelText).toBeNull();
  });
});

describe('plain text derived from HTML', () => {
  it('keeps links, paragraphs and heading case, drops images and layout tables', () => {
    const text = htmlToPlainText(
      '<table><tr><td><h1>Welcome</h1></td></tr><tr><td><p>Read <a href="https://example.com/a">the guide</a>.</p>' +
        '<img src="https://cdn.example.com/x.png" alt="x"></td><td><p>Second column</p></td></tr>' +
        '<tr><td><table><tr><td>&nbsp;</td></tr></table></td></tr></table>',
    );
    expect(text).toBe('Welcome\n\nRead the guide [https://example.com/a].\n\nSecond column');
  });

  it('a link whose text is its address is written once', () => {
    expect(htmlToPlainText('<p><a href="https://example.com">https://example.com</a></p>')).toBe('https://example.com');
  });
});

describe('the memory one render may use', () => {
  /** Each block builds a string of 10 × 2^14 = 163,840 characters: far under liquidjs' own limit per piece. */
  const bigBlock = { type: 'heading', text: '{% assign s = "xxxxxxxxxx" %}{% for a in (1..14) %}{% assign s = s | append: s %}{% endfor %}{{ s }}' };
  const blocks = (count: number) => version({ format: 'blocks', body: JSON.stringify(Array.from({ length: count }, () => bigBlock)) });

  it('pieces that each fit but together pass the render\'s memory → 422 template_invalid naming the render budget', () => {
    expect(renderTemplate(blocks(20), {}).html?.length).toBeGreaterThan(20 * 163_840);
    const error = thrown(() => renderTemplate(blocks(20), {}, { memoryChars: 1_000_000 }));
    expect(error).toMatchObject({ code: 'template_invalid', message: expect.stringContaining('render budget (1000000 characters') });
  });

  it('one piece that builds past what is left → the same 422, before the string is made', () => {
    const error = thrown(() => renderTemplate(version({ format: 'text', body: bigBlock.text }), {}, { memoryChars: 100_000 }));
    expect(error).toMatchObject({ code: 'template_invalid', message: expect.stringContaining('render budget') });
  });

  it('a render within its memory is unchanged by the budget', () => {
    expect(renderTemplate(blocks(2), {}, { memoryChars: 1_000_000 })).toEqual(renderTemplate(blocks(2), {}));
  });
});
