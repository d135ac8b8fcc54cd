import { randomBytes, randomUUID } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { QueryTypes } from 'sequelize';
import { dkimRecordName, dkimValue } from '../../core/dns-records';
import { unsubscribeTokens } from '../../core/unsubscribe-token';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

// One-click unsubscribe (RFC 8058) through the whole send path: the headers a campaign message leaves
// with, then the public endpoint called as a mailbox provider or a person would, with a plain HTTP client.
const PUBLIC_BASE_URL = 'https://mail.example.test';
let stack: EmailStack;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', PUBLIC_BASE_URL } });
});
afterAll(async () => {
  await stack.close();
  await dns.close();
});

jest.setTimeout(60_000);

interface MessageBody {
  engagement: { unsubscribed: boolean; lastEventAt: string | null };
  events: Array<{ type: string }>;
}

/** A workspace with a verified domain whose DKIM key is published, as a receiving server would look it up. */
async function sender() {
  const workspace = await createTestWorkspace(stack.api, { domain: true });
  const { domain } = workspace;
  const [key] = await stack.api.db.query<{ dkim_selector: string; dkim_public_key: string }>(
    'SELECT dkim_selector, dkim_public_key FROM domains WHERE workspace_id = $1 AND name = $2',
    { bind: [workspace.workspaceId, domain], type: QueryTypes.SELECT },
  );
  dns.setTxt(dkimRecordName(key.dkim_selector, domain), dkimValue(key.dkim_public_key));
  return { ...workspace, domain, call: stack.api.as(workspace.apiKey) };
}

/** A campaign message to a fresh address, delivered through the stack; returns it with the mail received. */
async function deliveredCampaignMessage(workspace: Awaited<ReturnType<typeof sender>>, kind: 'campaign' | 'automation' = 'campaign') {
  const toPrefix = `reader-${randomUUID().slice(0, 8)}`;
  const [id] = await queueMessages(stack.api.db, workspace.workspaceId, { kind, count: 1, from: `News <news@${workspace.domain}>`, toPrefix });
  await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
  const address = `${toPrefix}-0@example.org`;
  const mail = stack.sink.received.find((received) => received.recipients.includes(address));
  if (!mail) throw new Error(`nothing received by ${address}`);
  return { id, address, raw: mail.raw, link: header(mail.raw, 'List-Unsubscribe')?.match(/^<(.+)>$/)?.[1] ?? '' };
}

/** A header's unfolded value, or undefined. */
function header(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  return head.split('\r\n').find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1).trim();
}

/** The link's path on the test API (the link itself points at PUBLIC_BASE_URL). */
const onApi = (link: string) => `${stack.api.url}${new URL(link).pathname}`;

const oneClick = (url: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });

/** Everything an unsubscribe changes, to compare before and after. */
async function state(workspace: Awaited<ReturnType<typeof sender>>, messageId: string) {
  const message = (await workspace.call('GET', `/emails/${messageId}`)).body as MessageBody;
  const suppressions = (await workspace.call('GET', '/suppressions')).body as { data: Array<{ address: string; reason: string; createdAt: string }> };
  const consents = await stack.api.db.query<{ address: string; consent: string }>(
    'SELECT address, consent FROM contact_identities WHERE workspace_id = $1 ORDER BY address',
    { bind: [workspace.workspaceId], type: QueryTypes.SELECT },
  );
  return { engagement: message.engagement, events: message.events.map((event) => event.type), suppressions: suppressions.data, consents };
}

describe('the headers of marketing mail', () => {
  it('a campaign message carries List-Unsubscribe with an https one-click URL and List-Unsubscribe-Post, both DKIM-signed', async () => {
    const workspace = await sender();
    const { raw, link } = await deliveredCampaignMessage(workspace);
    expect(link).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/[A-Za-z0-9_-]+$`));
    expect(header(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

    const verdict = await dkimVerify(Buffer.from(raw), { resolver: dns.resolver });
    expect(verdict.results).toHaveLength(1);
    expect(verdict.results[0].status).toMatchObject({ result: 'pass', aligned: workspace.domain });
    // The signature's h= tag lists the headers it covers; the pass above proves they are intact.
    const signed = (header(raw, 'DKIM-Signature')?.match(/\bh=([^;]+)/)?.[1] ?? '').replace(/\s/g, '').toLowerCase().split(':');
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
  });

  it('an automation message carries them too; a transactional one carries neither', async () => {
    const workspace = await sender();
    expect(header((await deliveredCampaignMessage(workspace, 'automation')).raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

    const sent = await workspace.call('POST', '/emails', {
      from: `billing@${workspace.domain}`, to: 'receipt@example.org', subject: 'Receipt', text: 'Thanks', idempotencyKey: `receipt-${randomUUID()}`,
    });
    const { id } = sent.body as { id: string };
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const raw = stack.sink.received.find((mail) => mail.recipients.includes('receipt@example.org') && mail.raw.includes(id))?.raw ?? '';
    expect(raw).toContain('Subject: Receipt');
    expect(header(raw, 'List-Unsubscribe')).toBeUndefined();
    expect(header(raw, 'List-Unsubscribe-Post')).toBeUndefined();
  });
});

describe('the one-click endpoint', () => {
  it('a one-click POST unsubscribes: suppressed as unsubscribed, engagement and event on the message, contact opted out, later sends refused', async () => {
    const workspace = await sender();
    const { id, address, link } = await deliveredCampaignMessage(workspace);
    await workspace.call('POST', '/contacts', { identities: [{ channel: 'email', address, consent: 'opted_in' }] });

    const response = await oneClick(onApi(link));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('You are unsubscribed');

    const after = await state(workspace, id);
    expect(after.suppressions).toEqual([expect.objectContaining({ address, reason: 'unsubscribed' })]);
    expect(((await workspace.call('GET', '/suppressions?reason=unsubscribed')).body as { data: Array<{ address: string }> }).data).toEqual([
      expect.objectContaining({ address }),
    ]);
    expect(after.engagement).toMatchObject({ unsubscribed: true, lastEventAt: expect.any(String) });
    expect(after.events).toContain('unsubscribe');
    expect(after.consents).toEqual([{ address, consent: 'opted_out' }]);

    const later = await workspace.call('POST', '/emails', {
      from: `news@${workspace.domain}`, to: address, subject: 'Again', text: 'Hi', idempotencyKey: `again-${randomUUID()}`,
    });
    expect(later).toMatchObject({ status: 409, body: { error: 'suppressed' } });
  });

  it('a second POST, or two at once, change nothing more and answer the same', async () => {
    const workspace = await sender();
    const { id, link } = await deliveredCampaignMessage(workspace);
    const answers = await Promise.all([oneClick(onApi(link)), oneClick(onApi(link))]);
    const once = await state(workspace, id);
    const again = await oneClick(onApi(link));

    expect([...answers, again].map((answer) => answer.status)).toEqual([200, 200, 200]);
    const bodies = await Promise.all([...answers, again].map((answer) => answer.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(once.events.filter((type) => type === 'unsubscribe')).toHaveLength(1);
    expect(await state(workspace, id)).toEqual(once);
  });

  it('a plain form POST with an empty body unsubscribes too', async () => {
    const workspace = await sender();
    const { id, address, link } = await deliveredCampaignMessage(workspace);
    expect((await fetch(onApi(link), { method: 'POST' })).status).toBe(200);
    expect((await state(workspace, id)).suppressions).toEqual([expect.objectContaining({ address, reason: 'unsubscribed' })]);
  });

  it('a GET shows a confirmation page with a form and changes nothing', async () => {
    const workspace = await sender();
    const { id, address, link } = await deliveredCampaignMessage(workspace);
    const before = await state(workspace, id);

    const page = await fetch(onApi(link));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toMatch(/<form method="post">[^]*name="List-Unsubscribe" value="One-Click"[^]*<button/);
    expect(html).toContain(address);
    expect((await fetch(onApi(link), { method: 'HEAD' })).status).toBe(200);

    expect(await state(workspace, id)).toEqual(before);
    expect(before).toMatchObject({ engagement: { unsubscribed: false }, suppressions: [] });
    expect(before.events).not.toContain('unsubscribe');
  });

  it('a forged or tampered token answers 404 to GET and POST and changes nothing', async () => {
    const workspace = await sender();
    const { id, address, link } = await deliveredCampaignMessage(workspace);
    const other = await deliveredCampaignMessage(workspace);
    const before = await state(workspace, id);
    const genuine = new URL(link).pathname.split('/').pop() ?? '';
    const repointed = Buffer.from(genuine, 'base64url');
    Buffer.from(other.id.replace(/-/g, ''), 'hex').copy(repointed, 17);
    const flipped = Buffer.from(genuine, 'base64url');
    flipped[flipped.length - 1] ^= 1;
    const forgedTokens = [
      repointed.toString('base64url'), // this token's MAC, another message of the workspace
      flipped.toString('base64url'),
      unsubscribeTokens([randomBytes(32)]).sign({ workspaceId: workspace.workspaceId, messageId: id, address }), // another key
      `${genuine}x`,
      'not-a-token',
    ];
    for (const token of forgedTokens) {
      const url = `${stack.api.url}/unsubscribe/${token}`;
      expect((await fetch(url)).status).toBe(404);
      const posted = await oneClick(url);
      expect(posted.status).toBe(404);
      expect(await posted.text()).not.toContain(address);
    }
    expect(await state(workspace, id)).toEqual(before);
    expect((await state(workspace, other.id)).engagement.unsubscribed).toBe(false);
  });
});
