import { sesEventOf, snsMessages } from '../../providers/ses/sns';
import { type FakeSns, startFakeSns } from '../helpers/fake-sns';

const bounce = {
  notificationType: 'Bounce',
  mail: { messageId: 'ses-1' },
  bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'ann@example.org' }] },
};

describe('the SES provider\'s SNS envelopes', () => {
  let sns: FakeSns;
  beforeAll(async () => {
    sns = await startFakeSns();
  });
  afterAll(() => sns.close());

  it('a signed notification verifies, and its SES bounce reads as a hard bounce of the message', async () => {
    const envelope = await snsMessages(sns.agent).verify(sns.notification(bounce, { signatureVersion: '2' }));
    expect(envelope.TopicArn).toBe(sns.topicArn);
    expect(sesEventOf(envelope)).toEqual(expect.objectContaining({ type: 'bounce', providerMessageId: 'ses-1', bounceType: 'hard', recipients: ['ann@example.org'] }));
  });

  it('a notification altered after signing does not verify', async () => {
    const altered = sns.notification(bounce).replace('ann@example.org', 'bob@example.org');
    await expect(snsMessages(sns.agent).verify(altered)).rejects.toThrow();
  });

  it('a notification whose message is no SES event, or a kind not acted on (a send), reads as nothing', async () => {
    const messages = snsMessages(sns.agent);
    expect(sesEventOf(await messages.verify(sns.notification('just a string')))).toBeNull();
    expect(sesEventOf(await messages.verify(sns.notification({ notificationType: 'Send', mail: { messageId: 'ses-2' } })))).toBeNull();
  });

  it('a subscription confirmation is confirmed at SNS; a SubscribeURL off SNS\'s host is refused without a request', async () => {
    const messages = snsMessages(sns.agent);
    const before = sns.confirmations.length;
    const confirmation = await messages.verify(sns.subscriptionConfirmation());
    await messages.confirm(confirmation);
    expect(sns.confirmations.length).toBe(before + 1);
    await expect(messages.confirm({ ...confirmation, SubscribeURL: 'https://attacker.example/?Action=ConfirmSubscription' })).rejects.toThrow(/not an SNS URL/);
    expect(sns.confirmations.length).toBe(before + 1);
  });
});
