import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { type FakeSns, startFakeSns } from '../helpers/fake-sns';

let stack: EmailStack;
let sns: FakeSns;
beforeAll(async () => {
  sns = await startFakeSns();
  stack = await startEmailStack({ snsAgent: sns.agent, overrides: { EMAIL_PROVIDER: 'ses', SNS_TOPIC_ARNS: sns.topicArn } });
});
afterAll(async () => {
  await stack.close();
  await sns.close();
});

const notify = (body: string) => fetch(`${stack.api.url}/callbacks/ses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });

describe('SES over SNS', () => {
  it('a hard bounce marks the message bounced and suppresses the address: the next send to it answers 409', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    // The stand-in refuses senders SES does not know; in production verify registers the domain.
    await new SESv2Client({}).send(new CreateEmailIdentityCommand({ EmailIdentity: domain }));
    const send = () =>
      stack.api.call('POST', '/api/v1/emails', {
        key: apiKey,
        body: { from: `a@${domain}`, to: 'bouncy@example.org', subject: 'S', text: 'T', idempotencyKey: `k-${Date.now()}-${Math.random()}` },
      });
    const accepted = await send();
    const id = (accepted.body as { id: string }).id;
    await stack.waitForStatus(workspaceId, id, ['sent']);
    const status = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    const sesId = (status.body as { provider: string; providerMessageId: string }).providerMessageId;
    expect(status.body).toMatchObject({ provider: 'ses', providerMessageId: expect.any(String) });

    const bounce = sns.notification({
      notificationType: 'Bounce',
      mail: { messageId: sesId },
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'bouncy@example.org' }] },
    });
    expect((await notify(bounce)).status).toBe(200);
    // SNS redelivers: the same notification changes nothing more.
    expect((await notify(bounce)).status).toBe(200);

    const after = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    expect(after.body).toMatchObject({ status: 'bounced', engagement: { bounced: true } });
    const events = (after.body as { events: Array<{ type: string; bounceType?: string }> }).events;
    expect(events.filter((event) => event.type === 'bounce')).toEqual([expect.objectContaining({ bounceType: 'hard' })]);
    expect(await send()).toMatchObject({ status: 409, body: { error: 'suppressed' } });
  });

  it('delivery and complaint move the status; a soft bounce is recorded without suppressing', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    await new SESv2Client({}).send(new CreateEmailIdentityCommand({ EmailIdentity: domain }));
    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'soft@example.org', subject: 'S', text: 'T', idempotencyKey: `k-${Date.now()}` },
    });
    const id = (accepted.body as { id: string }).id;
    await stack.waitForStatus(workspaceId, id, ['sent']);
    const sesId = ((await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey })).body as { providerMessageId: string }).providerMessageId;
    const mail = { messageId: sesId };

    await notify(sns.notification({ eventType: 'Bounce', mail, bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'soft@example.org' }] } }, { signatureVersion: '2' }));
    await notify(sns.notification({ notificationType: 'Delivery', mail, delivery: { recipients: ['soft@example.org'] } }));
    expect((await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey })).body).toMatchObject({ status: 'delivered', engagement: { bounced: false } });
    await notify(sns.notification({ notificationType: 'Complaint', mail, complaint: { complainedRecipients: [{ emailAddress: 'soft@example.org' }] } }));
    const final = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    expect(final.body).toMatchObject({ status: 'complained' });
    expect((final.body as { events: Array<{ type: string }> }).events.map((event) => event.type)).toEqual(['sent', 'bounce', 'delivered', 'complaint']);
  });

  it('refuses a forged signature, and confirms a subscription at SNS', async () => {
    const forged = JSON.parse(sns.notification({ notificationType: 'Delivery', mail: { messageId: 'x' } }));
    forged.Message = JSON.stringify({ notificationType: 'Bounce', mail: { messageId: 'x' } });
    expect((await notify(JSON.stringify(forged))).status).toBe(401);

    const confirmation = JSON.parse(sns.subscriptionConfirmation());
    expect(sns.confirmations).toHaveLength(0);
    expect((await notify(JSON.stringify(confirmation))).status).toBe(200);
    expect(sns.confirmations).toHaveLength(1);
  });
});
