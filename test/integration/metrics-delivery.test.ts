import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { SMTPServer } from 'smtp-server';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { connectTemporal } from '../../temporal/connection';
import { closeInboundSmtp } from '../../workers/inbox/smtp-server';
import { startMetricsServer } from '../../workers/metrics-server';
import { runOutboxGauges } from '../../workers/outbox-gauges';
import { createList, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { startInboundListener } from '../helpers/inbox-listener';
import { sampleOf, scrape } from '../helpers/metrics-scrape';
import { expectStatus, until } from '../helpers/polling';
import { openSmtpSession } from '../helpers/smtp-session';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { createTestWorkspace } from '../helpers/workspaces';

jest.setTimeout(120_000);

// The real send path (API, dispatcher, workers on the Temporal dev server, an SMTP sink as the provider), the
// inbound listener and a webhook receiver, all in this process: the worker's endpoint is the one the worker
// and the inbound process serve (workers/metrics-server.ts), so what it shows here is what Prometheus scrapes.
let stack: EmailStack;
let client: Client;
let dns: TestDnsServer;
let blobs: BlobStore;
let inbound: { server: SMTPServer; port: number };
let receiver: WebhookReceiver;
let worker: { port: number; close: () => Promise<void> };

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver((path) => (path.startsWith('/broken') ? 500 : path.startsWith('/gone') ? 410 : 204));
  stack = await startEmailStack({ overrides: { OPS_TOKEN: '', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  client = await connectTemporal(stack.api.config);
  blobs = createBlobStore(blobStoreOptions(stack.api.config));
  inbound = await startInboundListener({ stack, client, dns, blobs });
  worker = await startMetricsServer(new Registry(), '127.0.0.1', 0);
});

afterAll(async () => {
  await closeInboundSmtp(inbound.server);
  await worker.close();
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

const workerScrape = () => scrape(`http://127.0.0.1:${worker.port}`);

/** How much each of these samples grew while `act` ran, read from `read` before and after. */
async function growth(read: () => Promise<string>, samples: Record<string, [string, Record<string, string>]>, act: () => Promise<void>) {
  const before = await read();
  await act();
  const after = await read();
  return Object.fromEntries(Object.entries(samples).map(([key, [name, labels]]) => [key, sampleOf(after, name, labels) - sampleOf(before, name, labels)]));
}

describe('metrics of the send path, read from the endpoints Prometheus scrapes', () => {
  it('an accepted email, its repeat and a send from an unverified domain count accepted, duplicate and refused with its code on the API', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const kind = { channel: 'email', kind: 'transactional' };
    const grew = await growth(() => scrape(stack.api.url), {
      accepted: ['messaging_messages_accepted_total', { ...kind, outcome: 'accepted' }],
      duplicate: ['messaging_messages_accepted_total', { ...kind, outcome: 'duplicate' }],
      refused: ['messaging_messages_accepted_total', { ...kind, outcome: 'refused', code: 'domain_not_verified' }],
    }, async () => {
      const send = { from: `hello@${workspace.domain}`, to: 'someone@example.org', subject: 'Hi', text: 'Hi', idempotencyKey: `metrics-${workspace.workspaceId}` };
      const accepted = await expectStatus(workspace.call('POST', '/emails', send), 202);
      await expectStatus(workspace.call('POST', '/emails', send), 200);
      const refused = await workspace.call('POST', '/emails', { ...send, from: 'hello@not-verified.example', idempotencyKey: `refused-${workspace.workspaceId}` });
      expect(refused.body).toMatchObject({ error: 'domain_not_verified' });
      // Sent before the next test starts counting sends.
      await stack.waitForStatus(workspace.workspaceId, accepted.id as string, ['sent']);
    });
    expect(grew).toEqual({ accepted: 1, duplicate: 1, refused: 1 });
  });

  it('a campaign to three contacts counts three campaign acceptances and three sends on the worker, once each', async () => {
    const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
    const listId = await createList(workspace.call);
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 3, prefix: `campaign-${workspace.workspaceId}`, listId });
    const grew = await growth(workerScrape, {
      accepted: ['messaging_messages_accepted_total', { channel: 'email', kind: 'campaign', outcome: 'accepted' }],
      sent: ['messaging_sends_total', { provider: 'smtp', channel: 'email', status: 'sent' }],
    }, async () => {
      const created = await expectStatus(workspace.call('POST', '/campaigns', { name: 'Counted', fromAddress: `news@${workspace.domain}`, listId, subject: 'S', text: 'T' }), 201);
      expect(await sendNow(workspace.call, created.id as string)).toMatchObject({ status: 202 });
      await waitForCampaign(workspace.call, created.id as string, ['sent']);
    });
    expect(grew).toEqual({ accepted: 3, sent: 3 });
  });

  it('a recipient refused at RCPT counts the send as sent and then bounced for the smtp provider, and the provider call is timed as ok', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    stack.sink.refuseRecipients((address) => (address === 'gone@example.org' ? [550, '5.1.1 <gone@example.org>: User unknown'] : null));
    const email = { provider: 'smtp', channel: 'email' };
    const grew = await growth(workerScrape, {
      sent: ['messaging_sends_total', { ...email, status: 'sent' }],
      bounced: ['messaging_sends_total', { ...email, status: 'bounced' }],
      calls: ['messaging_provider_call_duration_seconds_count', { ...email, result: 'ok' }],
    }, async () => {
      const body = await expectStatus(workspace.call('POST', '/emails', {
        from: `hello@${workspace.domain}`, to: 'gone@example.org', subject: 'Hi', text: 'Hi', idempotencyKey: `bounce-${workspace.workspaceId}`,
      }), 202);
      await stack.waitForStatus(workspace.workspaceId, body.id as string, ['bounced']);
    });
    expect(grew).toEqual({ sent: 1, bounced: 1, calls: 1 });
  });

  it('a relay that refuses the message for good counts it failed, and its call as permanent', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    stack.sink.refuseSender([550, '5.7.1 Relay access denied']);
    const email = { provider: 'smtp', channel: 'email' };
    const grew = await growth(workerScrape, {
      failed: ['messaging_sends_total', { ...email, status: 'failed' }],
      sent: ['messaging_sends_total', { ...email, status: 'sent' }],
      permanent: ['messaging_provider_call_duration_seconds_count', { ...email, result: 'permanent' }],
    }, async () => {
      const body = await expectStatus(workspace.call('POST', '/emails', {
        from: `hello@${workspace.domain}`, to: 'someone@example.org', subject: 'Hi', text: 'Hi', idempotencyKey: `failed-${workspace.workspaceId}`,
      }), 202);
      await stack.waitForStatus(workspace.workspaceId, body.id as string, ['failed']);
    });
    expect(grew).toEqual({ failed: 1, sent: 0, permanent: 1 });
  });

  it('a webhook endpoint answering 500 counts an http_5xx attempt; one answering 410 counts http_4xx and is disabled once', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const broken = `/broken/${workspace.workspaceId}`;
    const gone = `/gone/${workspace.workspaceId}`;
    const grew = await growth(workerScrape, {
      http5xx: ['messaging_webhook_attempts_total', { result: 'http_5xx' }],
      http4xx: ['messaging_webhook_attempts_total', { result: 'http_4xx' }],
      disabled: ['messaging_webhook_endpoints_disabled_total', { reason: 'gone' }],
    }, async () => {
      for (const path of [broken, gone]) await expectStatus(workspace.call('POST', '/webhooks', { url: `${receiver.url}${path}`, events: ['email.sent'] }), 201);
      await expectStatus(workspace.call('POST', '/emails', {
        from: `hello@${workspace.domain}`, to: 'someone@example.org', subject: 'Hi', text: 'Hi', idempotencyKey: `hook-${workspace.workspaceId}`,
      }), 202);
      await receiver.waitFor(broken, 1);
      await receiver.waitFor(gone, 1);
      // The attempt is counted when its answer is recorded, a moment after the receiver saw it.
      await until('both attempts recorded', async () => sampleOf(await workerScrape(), 'messaging_webhook_endpoints_disabled_total', { reason: 'gone' }), (value) => value > 0);
      await until('the 500 recorded', () => stack.api.db.query("SELECT 1 FROM webhook_attempts WHERE workspace_id = $1 AND status_code = 500", { bind: [workspace.workspaceId] }).then(([rows]) => rows), (rows) => rows.length > 0);
    });
    expect(grew).toEqual({ http5xx: 1, http4xx: 1, disabled: 1 });
  });

  it('inbound RCPTs for a domain not ours and for a forged return path are refused and counted relay_denied and unknown_recipient', async () => {
    const rcpt = (reason: string) => ['messaging_inbound_smtp_refusals_total', { stage: 'rcpt', reason }] as [string, Record<string, string>];
    const grew = await growth(workerScrape, { relay: rcpt('relay_denied'), unknown: rcpt('unknown_recipient') }, async () => {
      const session = await openSmtpSession(inbound.port);
      try {
        await session.command('EHLO mx.example.net');
        expect(await session.command('MAIL FROM:<sender@example.net>')).toMatch(/^250/);
        expect(await session.command('RCPT TO:<someone@not-ours.example>')).toMatch(/^550 5\.7\.1/);
        expect(await session.command(`RCPT TO:<bounces+${'a'.repeat(45)}@bounces.example.org>`)).toMatch(/^550 5\.1\.1/);
      } finally {
        session.close();
      }
    });
    expect(grew).toEqual({ relay: 1, unknown: 1 });
  });
});

describe('outbox gauges', () => {
  it('a message waiting undispatched shows in the transactional email depth with its age, and leaves it once sent', async () => {
    const registry = new Registry();
    const gauges = runOutboxGauges({ db: stack.api.db, registry, logger: pino({ level: 'silent' }), channels: ['email', 'whatsapp', 'telegram'], intervalMs: 60_000 });
    const read = async (name: string) => sampleOf(await registry.metrics(), name, { class: 'transactional', channel: 'email' });
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    await stack.stopDispatcher();
    try {
      await gauges.sample();
      expect(await read('messaging_outbox_depth')).toBe(0);
      expect(await read('messaging_outbox_oldest_age_seconds')).toBe(0);
      const body = await expectStatus(workspace.call('POST', '/emails', {
        from: `hello@${workspace.domain}`, to: 'someone@example.org', subject: 'Hi', text: 'Hi', idempotencyKey: `outbox-${workspace.workspaceId}`,
      }), 202);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await gauges.sample();
      expect(await read('messaging_outbox_depth')).toBe(1);
      expect(await read('messaging_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(1);
      // Every class is exported, at 0 when empty, so an alert on one sees a value rather than no series.
      expect(sampleOf(await registry.metrics(), 'messaging_outbox_depth', { class: 'campaign', channel: 'whatsapp' })).toBe(0);

      stack.startDispatcher();
      await stack.waitForStatus(workspace.workspaceId, body.id as string, ['sent']);
      await gauges.sample();
      expect(await read('messaging_outbox_depth')).toBe(0);
    } finally {
      stack.startDispatcher();
      await gauges.stop();
    }
  });
});
