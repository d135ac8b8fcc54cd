import { randomUUID } from 'node:crypto';
import { type ParsedMail, simpleParser } from 'mailparser';
import { createList, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

// Personalization of a send's and a campaign's own content (not only templates'), and the sender's own
// unsubscribe link (`{{ unsubscribe_url }}`), through the real API, workflow, workers and an SMTP sink.
const PUBLIC_BASE_URL = 'https://mail.example.test';
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', PUBLIC_BASE_URL } });
});
afterAll(() => stack.close());

jest.setTimeout(120_000);

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { domain: true });
  return { ...workspace, from: `News <news@${workspace.domain}>` };
}

/** The mail delivered to an address, parsed, with its raw text (mailparser folds List-* headers into one). */
async function delivered(address: string): Promise<ParsedMail & { raw: string }> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const mail = stack.sink.received.find((received) => received.recipients.includes(address));
    if (mail) return { ...(await simpleParser(mail.raw)), raw: mail.raw };
  }
  throw new Error(`nothing delivered to ${address}`);
}

/** The URL of the List-Unsubscribe header (`<https://…>`), or null. */
function headerLink(mail: { raw: string }): string | null {
  return /^List-Unsubscribe:\s*<([^>]+)>/m.exec(mail.raw)?.[1] ?? null;
}

describe('a campaign\'s own content', () => {
  it('inline subject, html and text render with each contact: two contacts get two personalized mails, each with its own unsubscribe link', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const prefix = `inl-${workspaceId.slice(0, 8)}`;
    const contacts = await seedContacts(stack.api.db, workspaceId, { count: 2, prefix, listId, attributes: (i) => ({ first_name: ['Ann', 'Bob'][i] }) });
    const campaign = await call('POST', '/campaigns', {
      name: 'Inline',
      fromAddress: from,
      listId,
      subject: 'Hi {{ first_name }}',
      html: '<p>Hello {{ contact.first_name }} ({{ contact.email }})</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
      text: 'Hello {{ first_name | default: "there" }}. Leave: {{ unsubscribe_url }}',
    });
    expect(campaign.status).toBe(201);
    const id = (campaign.body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({ status: 202 });
    await waitForCampaign(call, id, ['sent']);

    const links = new Set<string>();
    for (const [i, contact] of contacts.entries()) {
      const name = ['Ann', 'Bob'][i];
      const mail = await delivered(contact.address);
      expect(mail.subject).toBe(`Hi ${name}`);
      expect(mail.html).toContain(`Hello ${name} (${contact.address})`);
      expect(mail.text).toContain(`Hello ${name}. Leave: `);
      expect(`${mail.subject} ${mail.html} ${mail.text}`).not.toContain('{{');
      // The sender's own link is the header's one-click link, untouched by click tracking.
      const link = headerLink(mail);
      expect(link).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`));
      expect(mail.html).toContain(`href="${link}"`);
      expect(mail.text).toContain(`Leave: ${link}`);
      links.add(link as string);
    }
    expect(links.size).toBe(2);
  });

  it('inline content that does not parse is refused with 422 template_invalid naming the field, at create, at update and at send', async () => {
    const { call, from } = await sender();
    const listId = await createList(call);
    expect(await call('POST', '/campaigns', { name: 'x', fromAddress: from, listId, subject: 'Hi {{ first_name', html: '<p>x</p>' })).toMatchObject({
      status: 422,
      body: { error: 'template_invalid', field: 'subject' },
    });
    const created = await call('POST', '/campaigns', { name: 'x', fromAddress: from, listId, subject: 'Hi', html: '<p>ok</p>' });
    const id = (created.body as { id: string }).id;
    expect(await call('PATCH', `/campaigns/${id}`, { html: '<p>{{ first_name | no_such_filter }}</p>' })).toMatchObject({
      status: 422,
      body: { error: 'template_invalid', field: 'html' },
    });
    expect(await call('PATCH', `/campaigns/${id}`, { text: '{% if x %}never closed' })).toMatchObject({ status: 422, body: { error: 'template_invalid', field: 'text' } });

    // A draft stored before content was checked is refused when the send is confirmed, never sent as written.
    await stack.api.db.query('UPDATE campaigns SET html = $2 WHERE id = $1', { bind: [id, '<p>{{ broken </p>'] });
    expect(await sendNow(call, id)).toMatchObject({ status: 422, body: { error: 'template_invalid', field: 'html' } });
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ status: 'draft' });
  });
});

describe('transactional mail', () => {
  it('listUnsubscribe: true adds the one-click headers, and {{ unsubscribe_url }} in the body is that same link', async () => {
    const { call, domain } = await sender();
    const to = `t-${randomUUID().slice(0, 8)}@example.org`;
    const sent = await call('POST', '/emails', {
      from: `Shop <shop@${domain}>`,
      to,
      subject: 'Your receipt',
      html: '<p>Thanks. <a href="{{ unsubscribe_url }}">Stop these mails</a></p>',
      idempotencyKey: randomUUID(),
      listUnsubscribe: true,
    });
    expect(sent).toMatchObject({ status: 202 });
    const mail = await delivered(to);
    const link = headerLink(mail);
    expect(link).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`));
    expect(mail.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);
    expect(mail.html).toContain(`href="${link}"`);

    // The link works: a one-click POST unsubscribes the address.
    const response = await fetch(`${stack.api.url}${new URL(link as string).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(response.status).toBeLessThan(300);
    const suppressions = await call('GET', '/suppressions');
    expect(JSON.stringify(suppressions.body)).toContain(to);
  });

  it('{{ unsubscribe_url }} without listUnsubscribe is refused with 422 on listUnsubscribe, inline or in the template, never sent empty', async () => {
    const { call, domain } = await sender();
    const base = { from: `shop@${domain}`, to: 'ann@example.org', subject: 'S', idempotencyKey: randomUUID() };
    expect(await call('POST', '/emails', { ...base, html: '<a href="{{ unsubscribe_url }}">stop</a>' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { listUnsubscribe: [expect.stringMatching(/unsubscribe_url/)] } } },
    });
    const name = `footer-${randomUUID().slice(0, 8)}`;
    await call('POST', '/templates', { name, format: 'blocks', subject: 'News', body: [{ type: 'text', text: 'Hi' }, { type: 'footer', text: '[Unsubscribe]({{ unsubscribe_url }})' }] });
    expect(await call('POST', '/emails', { ...base, templateId: name, variables: {} })).toMatchObject({ status: 422, body: { error: { fieldErrors: { listUnsubscribe: expect.any(Array) } } } });
    const to = `footer-${randomUUID().slice(0, 8)}@example.org`;
    expect(await call('POST', '/emails', { ...base, to, templateId: name, listUnsubscribe: true })).toMatchObject({ status: 202 });
    // The blocks footer's link is the header's.
    const mail = await delivered(to);
    expect(mail.html).toContain(`href="${headerLink(mail)}"`);
  });

  it('without listUnsubscribe or variables, no headers are added and braces stay as written', async () => {
    const { call, domain } = await sender();
    const to = `t-${randomUUID().slice(0, 8)}@example.org`;
    await call('POST', '/emails', { from: `shop@${domain}`, to, subject: 'Code {{ x }}', text: 'Use {{ name }} in your template', idempotencyKey: randomUUID() });
    const mail = await delivered(to);
    expect(mail.raw).not.toMatch(/^List-Unsubscribe/m);
    expect(mail.subject).toBe('Code {{ x }}');
    expect(mail.text).toContain('Use {{ name }} in your template');
  });

  it('with variables, inline content renders as a template does; content that does not parse is 422 naming the field', async () => {
    const { call, domain } = await sender();
    const to = `t-${randomUUID().slice(0, 8)}@example.org`;
    const sent = await call('POST', '/emails', {
      from: `shop@${domain}`,
      to,
      subject: 'Order {{ order.id }}',
      html: '<p>Hi {{ first_name }}, {{ note }}</p>',
      variables: { first_name: 'Ada', order: { id: 'A-1' }, note: '<b>bold</b>' },
      idempotencyKey: randomUUID(),
    });
    expect(sent).toMatchObject({ status: 202 });
    const mail = await delivered(to);
    expect(mail.subject).toBe('Order A-1');
    // HTML-escaped as in a template: a variable cannot inject markup.
    expect(mail.html).toContain('Hi Ada, &lt;b&gt;bold&lt;/b&gt;');

    const refused = await call('POST', '/emails', { from: `shop@${domain}`, to, subject: 'x', html: '<p>{{ oops</p>', variables: {}, idempotencyKey: randomUUID() });
    expect(refused).toMatchObject({ status: 422, body: { error: 'template_invalid', field: 'html' } });
  });
});
