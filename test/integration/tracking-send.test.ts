import { simpleParser } from 'mailparser';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { addTestDomain, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';
import { HIT_FIXTURES } from '../helpers/tracking-fixtures';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', TRUST_PROXY: 'loopback' } });
});
afterAll(() => stack.close());

let sequence = 0;
const HTML = `<html><body><p>Hello! <a href="https://shop.example/sale/">See the sale</a></p>
<table><tr><td bgcolor="#111"><a href="https://shop.example/buy?sku=1" data-link-id="buy">Buy</a></td></tr></table>
<p><a href="mailto:help@shop.example">Write to us</a></p></body></html>`;

async function sendAndReceive(workspace: TestWorkspace & { domain: string }, extra: Record<string, unknown>) {
  const to = `reader-${(sequence += 1)}@example.org`;
  const response = await stack.api.as(workspace.apiKey)('POST', '/emails', {
    from: `Shop <news@${workspace.domain}>`, to, subject: 'Sale', idempotencyKey: `tracking-send-${Date.now()}-${sequence}`, ...extra,
  });
  expect(response.status).toBe(202);
  const id = (response.body as { id: string }).id;
  await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
  const mail = stack.sink.received.find((received) => received.recipients.includes(to));
  if (!mail) throw new Error('not delivered to the sink');
  return { id, parsed: await simpleParser(mail.raw) };
}

describe('tracking on the send path', () => {
  let workspace: TestWorkspace & { domain: string };
  beforeAll(async () => {
    const created = await createTestWorkspace(stack.api);
    workspace = { ...created, domain: (await addTestDomain(stack, created.workspaceId)).domain };
  });

  it('the delivered HTML carries the pixel and redirects; opening and clicking them over HTTP shows in GET /emails/:id', async () => {
    const { id, parsed } = await sendAndReceive(workspace, { html: HTML });
    const html = String(parsed.html);
    const base = stack.api.config.PUBLIC_BASE_URL;
    const redirects = [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1].replace(/&amp;/g, '&'));
    expect(redirects.filter((href) => href.startsWith(`${base}/t/c/`))).toHaveLength(3);
    expect(redirects).toContain('mailto:help@shop.example');
    expect(html).not.toContain('https://shop.example');
    const pixel = new RegExp(`<img src="(${base.replace(/[.]/g, '\\.')}/t/o/[^"]+)"`).exec(html)?.[1];
    expect(pixel).toBeDefined();
    // The plain-text part keeps links as written.
    expect(parsed.text).toContain('https://shop.example/sale/');

    // The reader comes back an hour later (the send time moved back instead of waiting).
    await stack.api.db.query(`UPDATE message_events SET created_at = created_at - interval '1 hour' WHERE message_id = $1 AND type = 'sent'`, { bind: [id] });
    const person = { 'user-agent': HIT_FIXTURES.personClickingCta.userAgent, 'x-forwarded-for': HIT_FIXTURES.personClickingCta.ip };
    const local = (url: string) => url.replace(base, stack.api.url);
    expect((await fetch(local(pixel ?? ''), { headers: person })).status).toBe(200);
    const buy = redirects.find((href) => href.startsWith(`${base}/t/c/`) && href.includes('.1.')) ?? '';
    const click = await fetch(local(buy), { redirect: 'manual', headers: person });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe(`https://shop.example/buy?sku=1&utm_source=${workspace.domain}&utm_medium=email&utm_campaign=transactional`);

    await stack.api.tracking.buffer.flush(true);
    const status = await stack.api.as(workspace.apiKey)('GET', `/emails/${id}`);
    expect(status.body).toMatchObject({
      engagement: { opensHuman: 1, opensMachine: 0, clicks: 1, contentClicks: 1, lastLinkUrl: 'https://shop.example/buy?sku=1', lastLinkRole: 'cta', links: ['https://shop.example/buy?sku=1'] },
      links: [{ url: 'https://shop.example/buy?sku=1', canonicalUrl: 'https://shop.example/buy?sku=1', role: 'cta', isContent: true, count: 1 }],
    });
    const events = (status.body as { events: Array<{ type: string }> }).events.filter((event) => event.type !== 'sent');
    expect(events).toEqual([
      expect.objectContaining({ type: 'open', classification: 'human' }),
      expect.objectContaining({ type: 'click', classification: 'human', linkId: 'buy', linkRole: 'cta', linkUrl: 'https://shop.example/buy?sku=1' }),
    ]);
  });

  it('with disableTracking the links carry UTM themselves, with no pixel and no redirect', async () => {
    const { parsed } = await sendAndReceive(workspace, { html: HTML, disableTracking: true });
    const html = String(parsed.html);
    expect(html).not.toContain('/t/');
    expect(html).toContain(`href="https://shop.example/sale/?utm_source=${workspace.domain}&amp;utm_medium=email&amp;utm_campaign=transactional"`);
  });

  it('with disableTracking and disableUtm the HTML goes out as written', async () => {
    const { parsed } = await sendAndReceive(workspace, { html: HTML, disableTracking: true, disableUtm: true });
    expect(String(parsed.html).trim()).toBe(HTML);
  });

  it('a text-only email is not tracked: its links go out as written', async () => {
    const { parsed } = await sendAndReceive(workspace, { text: 'Sale at https://shop.example/sale/ today' });
    expect(parsed.html).toBe(false);
    expect(parsed.text?.trim()).toBe('Sale at https://shop.example/sale/ today');
  });
});
