import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { type FakeSns, startFakeSns } from '../helpers/fake-sns';
import { sampleOf, scrape } from '../helpers/metrics-scrape';
import { expectStatus } from '../helpers/polling';
import { createTestWorkspace } from '../helpers/workspaces';

jest.setTimeout(120_000);

// SES notifications arrive at the API (POST /callbacks/ses), so the API's /metrics counts them.
let stack: EmailStack;
let sns: FakeSns;
beforeAll(async () => {
  sns = await startFakeSns();
  stack = await startEmailStack({ snsAgent: sns.agent, overrides: { EMAIL_PROVIDER: 'ses', SNS_TOPIC_ARNS: sns.topicArn, OPS_TOKEN: '' } });
});
afterAll(async () => {
  await stack.close();
  await sns.close();
});

const notify = (body: string) => fetch(`${stack.api.url}/callbacks/ses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });

describe('metrics of SES notifications', () => {
  it('a soft bounce, a delivery and a complaint count once each for ses on the API, a redelivered notification not again', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    // The stand-in refuses senders SES does not know; in production verify registers the domain.
    await new SESv2Client({}).send(new CreateEmailIdentityCommand({ EmailIdentity: workspace.domain }));
    const ses = (status: string) => ({ provider: 'ses', channel: 'email', status });
    const before = await scrape(stack.api.url);

    const body = await expectStatus(workspace.call('POST', '/emails', { from: `a@${workspace.domain}`, to: 'soft@example.org', subject: 'S', text: 'T', idempotencyKey: 'ses-metrics' }), 202);
    const id = body.id as string;
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    const mail = { messageId: ((await workspace.call('GET', `/emails/${id}`)).body as { providerMessageId: string }).providerMessageId };
    const delivery = sns.notification({ notificationType: 'Delivery', mail, delivery: { recipients: ['soft@example.org'] } });
    for (const notification of [
      sns.notification({ eventType: 'Bounce', mail, bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'soft@example.org' }] } }),
      delivery,
      delivery,
      sns.notification({ notificationType: 'Complaint', mail, complaint: { complainedRecipients: [{ emailAddress: 'soft@example.org' }] } }),
    ]) expect((await notify(notification)).status).toBe(200);

    const after = await scrape(stack.api.url);
    const grew = (status: string) => sampleOf(after, 'messaging_sends_total', ses(status)) - sampleOf(before, 'messaging_sends_total', ses(status));
    expect({ soft: grew('soft_bounced'), delivered: grew('delivered'), complained: grew('complained'), bounced: grew('bounced') })
      .toEqual({ soft: 1, delivered: 1, complained: 1, bounced: 0 });
  });
});
