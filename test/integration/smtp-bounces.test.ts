import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import nodemailer from 'nodemailer';
import { QueryTypes } from 'sequelize';
import type { SMTPServer } from 'smtp-server';
import { returnPathTokenOf, returnPathTokens } from '../../core/bounces/return-path';
import { configKeyring } from '../../core/config';
import { macKeys } from '../../core/secrets';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { closeInboundSmtp } from '../../workers/inbox/smtp-server';
import { createList, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { startInboundListener } from '../helpers/inbox-listener';
import { expectStatus, until } from '../helpers/polling';
import { openSmtpSession } from '../helpers/smtp-session';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(120_000);

// Mail leaves through the SMTP provider (the sink stands in for the receiving servers) with a VERP return
// path; bounces come back through the inbound listener (our MX) as real SMTP sessions, and are recorded by
// the bounce-mail workflow on the shipped workers under the Temporal dev server.
let stack: EmailStack;
let client: Client;
let dns: TestDnsServer;
let receiver: WebhookReceiver;
let blobs: BlobStore;
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
  stack = await startEmailStack({
    overrides: {
      RATE_LIMIT_PER_SECOND: '1000',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      SEND_RATE_PER_SECOND: '20',
      CAMPAIGN_AUTO_PAUSE_AFTER: '5',
      CAMPAIGN_AUTO_PAUSE_BOUNCE_RATE: '0.3',
    },
    activities: { campaignTiming: { pollMs: 100 } },
  });
  client = await connectTemporal(stack.api.config);
  blobs = createBlobStore(blobStoreOptions(stack.api.config));
  ({ server, port } = await startInboundListener({ stack, client, dns, blobs }));
});

afterAll(async () => {
  await closeInboundSmtp(server);
  blobs.close();
  await client.connection.close();
  await stack.close();
  await receiver.close();
  await dns.close();
});

afterEach(() => {
  stack.sink.refuseRecipients(() => null);
  stack.sink.refuseSender(null);
});

const query = <T extends object>(sql: string, bind: unknown[]) => stack.api.db.query<T>(sql, { bind, type: QueryTypes.SELECT });
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'bounces', `${name}.eml`), 'utf8');

/**
 * A workspace whose verified domain published its return-path records (the bounce subdomain's MX and SPF
 * checked), with a webhook for bounces and complaints.
 */
async function bouncingWorkspace() {
  const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const { domain } = workspace;
  await stack.api.db.query(
    `UPDATE domains SET record_checks = record_checks || '[{"record":"return_path_mx","status":"verified"},{"record":"return_path_spf","status":"verified"}]'::jsonb
     WHERE workspace_id = $1 AND name = $2`,
    { bind: [workspace.workspaceId, domain] },
  );
  const call = stack.api.as(workspace.apiKey);
  const path = `/${workspace.workspaceId}`;
  await expectStatus(call('POST', '/webhooks', { url: `${receiver.url}${path}`, events: ['email.bounced', 'email.complained'] }), 201);
  const send = async (to: string) => {
    const body = await expectStatus(call('POST', '/emails', { from: `news@${domain}`, to, subject: 'Hello', text: 'Hi', idempotencyKey: `bounce-${to}` }), 202);
    return body.id as string;
  };
  const webhooks = async (count: number) => (await receiver.waitFor(path, count)).map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> });
  const suppressions = async () => ((await call('GET', '/suppressions')).body as { data: Array<{ address: string; reason: string }> }).data;
  return { ...workspace, domain, call, send, webhooks, suppressions };
}

/** The envelope sender the sink saw for the message to `to`: its VERP return path. */
async function returnPathOf(to: string): Promise<string> {
  const [mail] = await until(`mail to ${to}`, async () => stack.sink.received.filter((each) => each.recipients.includes(to)), (found) => found.length > 0);
  return mail.from;
}

/** Mail to our MX as the receiving server's MTA sends its report (null sender). */
async function report(returnPath: string, raw: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'mx.example.net' });
  try {
    await transport.sendMail({ envelope: { from: '', to: [returnPath] }, raw });
  } finally {
    transport.close();
  }
}

const dsn = (returnPath: string, finalRecipient: string) =>
  fixture('rfc3464').replaceAll('bounces+TOKEN@bounces.sender.test', returnPath).replaceAll('nobody@example.net', finalRecipient);

describe('bounces and complaints of SMTP mail', () => {
  it('a recipient the receiving server refuses at RCPT: the message ends bounced (hard), the address is suppressed, email.bounced fires', async () => {
    const workspace = await bouncingWorkspace();
    stack.sink.refuseRecipients((address) => (address === 'nobody@example.org' ? [550, '5.1.1 <nobody@example.org>: Recipient address rejected: User unknown'] : null));
    const id = await workspace.send('nobody@example.org');

    await stack.waitForStatus(workspace.workspaceId, id, ['bounced']);
    expect(await workspace.suppressions()).toEqual([expect.objectContaining({ address: 'nobody@example.org', reason: 'hard_bounce' })]);
    const [hook] = await workspace.webhooks(1);
    expect(hook).toMatchObject({ type: 'email.bounced', data: { bounceType: 'hard', recipients: ['nobody@example.org'] } });
    expect(String(hook.data.reason)).toContain('550 5.1.1');
  });

  it('a DSN that arrives later at our MX for the VERP return path bounces (hard) and suppresses the recipient, and its redelivery changes nothing', async () => {
    const workspace = await bouncingWorkspace();
    const id = await workspace.send('later@example.org');
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const returnPath = await returnPathOf('later@example.org');
    expect(returnPath).toMatch(new RegExp(`^bounces\\+[a-z2-7]{45}@bounces\\.${workspace.domain.replaceAll('.', '\\.')}$`));

    const raw = dsn(returnPath, 'later@example.org');
    await report(returnPath, raw);
    await stack.waitForStatus(workspace.workspaceId, id, ['bounced']);
    expect(await workspace.suppressions()).toEqual([expect.objectContaining({ address: 'later@example.org', reason: 'hard_bounce' })]);
    expect((await workspace.webhooks(1))[0]).toMatchObject({ type: 'email.bounced', data: { bounceType: 'hard', recipients: ['later@example.org'] } });

    await report(returnPath, raw);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const events = await query<{ type: string }>("SELECT type FROM message_events WHERE message_id = $1 AND type = 'bounce'", [id]);
    expect(events).toHaveLength(1);
  });

  it('a message to several recipients leaves in one transaction each, every one with a return path naming only its own recipient', async () => {
    const workspace = await bouncingWorkspace();
    const body = await expectStatus(workspace.call('POST', '/emails', {
      from: `news@${workspace.domain}`, to: ['one@example.org', 'two@example.org'], cc: 'three@example.org', subject: 'Hello', text: 'Hi', idempotencyKey: `several-${workspace.workspaceId}`,
    }), 202);
    await stack.waitForStatus(workspace.workspaceId, body.id as string, ['sent']);
    const tokens = returnPathTokens(macKeys(configKeyring(stack.api.config)));
    const claims = await Promise.all(['one@example.org', 'two@example.org', 'three@example.org'].map(async (address) => {
      const mails = stack.sink.received.filter((mail) => mail.recipients.includes(address));
      expect(mails.map((mail) => mail.recipients)).toEqual([[address]]);
      return tokens.read(returnPathTokenOf(await returnPathOf(address)) ?? '');
    }));
    expect(claims).toEqual([0, 1, 2].map((recipientIndex) => ({ messageId: body.id, recipientIndex })));
  });

  it('a delayed DSN records delivery_delayed and leaves the message sent and the address unsuppressed', async () => {
    const workspace = await bouncingWorkspace();
    const id = await workspace.send('slow@example.org');
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const returnPath = await returnPathOf('slow@example.org');

    await report(returnPath, fixture('delayed').replaceAll('bounces+TOKEN@bounces.sender.test', returnPath).replaceAll('slow@example.net', 'slow@example.org'));
    const [event] = await until('delivery_delayed', () => query<{ data: Record<string, unknown> }>("SELECT data FROM message_events WHERE message_id = $1 AND type = 'delivery_delayed'", [id]), (rows) => rows.length === 1);
    expect(event.data).toMatchObject({ source: 'dsn', status: '4.7.1', recipients: ['slow@example.org'] });
    expect(await query<{ status: string }>('SELECT status FROM messages WHERE id = $1', [id])).toEqual([{ status: 'sent' }]);
    expect(await workspace.suppressions()).toEqual([]);
  });

  it('a forged DSN (a token whose MAC does not verify) is refused at RCPT and changes nothing', async () => {
    const workspace = await bouncingWorkspace();
    const id = await workspace.send('kept@example.org');
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const returnPath = await returnPathOf('kept@example.org');
    const token = returnPathTokenOf(returnPath) ?? '';
    const forged = returnPath.replace(token, `${token.slice(0, 40)}${token.slice(40) === 'aaaaa' ? 'bbbbb' : 'aaaaa'}`);

    const session = await openSmtpSession(port);
    await session.command('EHLO mx.example.net');
    expect(await session.command('MAIL FROM:<>')).toMatch(/^250/);
    expect(await session.command(`RCPT TO:<${forged}>`)).toMatch(/^550 5\.1\.1/);
    session.close();
    await expect(report(forged, dsn(forged, 'kept@example.org'))).rejects.toThrow();

    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await workspace.suppressions()).toEqual([]);
    expect(await query<{ status: string }>('SELECT status FROM messages WHERE id = $1', [id])).toEqual([{ status: 'sent' }]);
  });

  it('a DSN with a good token naming another Final-Recipient bounces only the token\'s recipient, never the other address', async () => {
    const workspace = await bouncingWorkspace();
    const id = await workspace.send('alias@example.org');
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const returnPath = await returnPathOf('alias@example.org');

    await report(returnPath, dsn(returnPath, 'victim@example.org'));
    await stack.waitForStatus(workspace.workspaceId, id, ['bounced']);
    const addresses = (await workspace.suppressions()).map((suppression) => suppression.address);
    expect(addresses).toEqual(['alias@example.org']);
    const [event] = await query<{ data: { recipients: string[]; reportedRecipient: string } }>("SELECT data FROM message_events WHERE message_id = $1 AND type = 'bounce'", [id]);
    expect(event.data).toMatchObject({ recipients: ['alias@example.org'], reportedRecipient: 'victim@example.org' });
  });

  it('an ARF complaint to the return path marks the message complained, suppresses the address and fires email.complained', async () => {
    const workspace = await bouncingWorkspace();
    const id = await workspace.send('reader@example.org');
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const returnPath = await returnPathOf('reader@example.org');

    await report(returnPath, fixture('arf').replaceAll('bounces+TOKEN@bounces.sender.test', returnPath).replaceAll('reader@example.com', 'reader@example.org'));
    await stack.waitForStatus(workspace.workspaceId, id, ['complained']);
    expect(await workspace.suppressions()).toEqual([expect.objectContaining({ address: 'reader@example.org', reason: 'complaint' })]);
    expect((await workspace.webhooks(1))[0]).toMatchObject({ type: 'email.complained', data: { recipients: ['reader@example.org'] } });
  });

  it('a relay that refuses our sender (5xx to MAIL FROM) fails the message and suppresses nobody', async () => {
    const workspace = await bouncingWorkspace();
    stack.sink.refuseSender([550, '5.7.1 Sender rejected: relay access denied']);
    const id = await workspace.send('fine@example.org');

    await stack.waitForStatus(workspace.workspaceId, id, ['failed']);
    expect(await workspace.suppressions()).toEqual([]);
    expect(await query("SELECT 1 FROM message_events WHERE message_id = $1 AND type = 'bounce'", [id])).toEqual([]);
  });

  it('a campaign whose recipients the receiving server refuses counts hard bounces in its metrics and pauses itself', async () => {
    const workspace = await bouncingWorkspace();
    const listId = await createList(workspace.call);
    const prefix = `refused-${workspace.workspaceId.slice(0, 8)}`;
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 60, prefix, listId });
    stack.sink.refuseRecipients((address) => (address.startsWith(`${prefix}-`) ? [550, '5.1.1 User unknown'] : null));
    const created = await expectStatus(workspace.call('POST', '/campaigns', { name: 'Refused', fromAddress: `news@${workspace.domain}`, listId, subject: 'S', text: 'T' }), 201);
    expect(await sendNow(workspace.call, created.id as string)).toMatchObject({ status: 202 });

    const paused = await waitForCampaign(workspace.call, created.id as string, ['paused'], 30_000);
    expect(paused.pausedReason).toMatch(/^hard bounce rate \d+(\.\d+)?% over \d+ sends is above 30%$/);
    const detail = (await workspace.call('GET', `/campaigns/${created.id as string}`)).body as { metrics: { hardBounces: number; bounceRate: number | null } };
    expect(detail.metrics.hardBounces).toBeGreaterThanOrEqual(5);
    expect(detail.metrics.bounceRate).toBeGreaterThan(0.3);
  });
});
