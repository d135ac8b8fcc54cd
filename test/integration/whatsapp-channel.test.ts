import { randomBytes, randomUUID } from 'node:crypto';
import { whatsAppAccounts } from '../../activities/whatsapp-delivery';
import { createWhatsAppChannel, type OutboundWhatsApp, type WhatsAppChannel } from '../../providers/twilio/whatsapp';
import { PermanentSendError, ProviderUnavailableError } from '../../core/delivery';
import { configKeyring } from '../../core/config';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { startTwilioStandIn, type TwilioStandIn } from '../helpers/twilio-stand-in';

const PUBLIC_BASE_URL = 'https://messaging.example.com';
const SENDER = '+14155552671';

describe('the WhatsApp channel through the twilio client', () => {
  let api: ApiHarness;
  let twilio: TwilioStandIn;
  let channel: WhatsAppChannel;
  /** Each test's customer has a number of its own, so the stand-in's requests to it are that test's alone. */
  let customers = 0;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TWILIO_API_URL: twilio.url, PUBLIC_BASE_URL });
    channel = createWhatsAppChannel({
      accounts: whatsAppAccounts(api.db),
      keyring: configKeyring(api.config),
      apiUrl: api.config.TWILIO_API_URL,
      publicBaseUrl: api.config.PUBLIC_BASE_URL,
    });
  });
  afterAll(async () => {
    await api.close();
    await twilio.close();
  });

  /** A workspace with its Twilio account saved through the API, and a customer number of its own. */
  async function configured() {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const accountSid = `AC${randomBytes(16).toString('hex')}`;
    const authToken = randomBytes(16).toString('hex');
    twilio.addAccount(accountSid, authToken);
    expect((await api.as(apiKey)('PUT', '/integrations/twilio', { accountSid, authToken, whatsappFrom: SENDER })).status).toBe(200);
    customers += 1;
    const customer = `+1415555${String(1000 + customers)}`;
    const message = (overrides: Partial<OutboundWhatsApp> = {}): OutboundWhatsApp => ({
      workspaceId,
      messageId: randomUUID(),
      to: customer,
      content: { kind: 'text', body: 'Your order has shipped' },
      mediaUrls: [],
      ...overrides,
    });
    /** The customer writes to us, as Twilio reports it: a signed inbound callback. */
    const customerWrites = async () => {
      const path = `/callbacks/twilio/${workspaceId}/inbound`;
      const params = { MessageSid: `SM${randomBytes(16).toString('hex')}`, From: `whatsapp:${customer}`, To: `whatsapp:${SENDER}`, Body: 'Hi' };
      expect(await twilio.callback({ postTo: `${api.url}${path}`, signedUrl: `${PUBLIC_BASE_URL}${path}`, authToken, params })).toBe(200);
    };
    const sendsTo = () => twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`);
    return { workspaceId, accountSid, customer, message, customerWrites, sendsTo };
  }

  it('free-form text outside the 24-hour window → a permanent error asking for a content template, nothing sent', async () => {
    const { message, sendsTo } = await configured();
    const sending = channel.send(message());
    await expect(sending).rejects.toBeInstanceOf(PermanentSendError);
    await expect(sending).rejects.toThrow(/content template/);
    expect(sendsTo()).toEqual([]);
  });

  it('free-form text after the customer wrote (inbound callback) → sent from the workspace\'s number, with the status callback', async () => {
    const { workspaceId, accountSid, customer, message, customerWrites, sendsTo } = await configured();
    await customerWrites();
    const receipt = await channel.send(message());
    expect(receipt).toEqual({ provider: 'twilio', providerMessageId: expect.stringMatching(/^SM[0-9a-f]{32}$/) });
    expect(sendsTo()).toEqual([
      {
        method: 'POST',
        path: `/2010-04-01/Accounts/${accountSid}/Messages.json`,
        username: accountSid,
        params: {
          From: `whatsapp:${SENDER}`,
          To: `whatsapp:${customer}`,
          Body: 'Your order has shipped',
          StatusCallback: `${PUBLIC_BASE_URL}/callbacks/twilio/${workspaceId}/status`,
        },
      },
    ]);
  });

  it('a content template outside the window → sent with its ContentSid and variables', async () => {
    const { message, sendsTo } = await configured();
    const content = { kind: 'template' as const, contentSid: 'HX0123456789abcdef0123456789abcdef', contentVariables: { 1: 'Ann', 2: 'A-1042' } };
    await channel.send(message({ content }));
    const [sent] = sendsTo();
    expect(sent.params).toMatchObject({ ContentSid: content.contentSid });
    expect(JSON.parse(String(sent.params.ContentVariables))).toEqual({ 1: 'Ann', 2: 'A-1042' });
    expect(sent.params.Body).toBeUndefined();
  });

  it('media urls → passed to Twilio as MediaUrl, each of them', async () => {
    const { message, sendsTo } = await configured();
    const content = { kind: 'template' as const, contentSid: 'HX0123456789abcdef0123456789abcdef', contentVariables: {} };
    await channel.send(message({ content, mediaUrls: ['https://cdn.example.com/invoice.pdf'] }));
    await channel.send(message({ content, mediaUrls: ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.jpg'] }));
    expect(sendsTo().map((request) => request.params.MediaUrl)).toEqual([
      'https://cdn.example.com/invoice.pdf',
      ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.jpg'],
    ]);
  });

  it('Twilio answers 21211 (invalid number) → a permanent error naming it', async () => {
    const { customer, message, customerWrites } = await configured();
    await customerWrites();
    twilio.refuse(`whatsapp:${customer}`, 'invalid-number');
    const sending = channel.send(message());
    await expect(sending).rejects.toBeInstanceOf(PermanentSendError);
    await expect(sending).rejects.toThrow(/21211/);
  });

  it('Twilio answers 429 → a retryable error, and the retry is sent', async () => {
    const { customer, message, customerWrites, sendsTo } = await configured();
    await customerWrites();
    twilio.refuse(`whatsapp:${customer}`, 'too-many-requests');
    const throttled = await channel.send(message()).then(() => null, (error: unknown) => error);
    expect(throttled).toBeInstanceOf(Error);
    expect(throttled).not.toBeInstanceOf(PermanentSendError);
    expect(throttled).toBeInstanceOf(ProviderUnavailableError);
    expect((throttled as Error).cause).toMatchObject({ status: 429 });

    twilio.refuse(`whatsapp:${customer}`, null);
    await expect(channel.send(message())).resolves.toMatchObject({ provider: 'twilio' });
    expect(sendsTo()).toHaveLength(2);
  });

  it('a workspace without Twilio, or a recipient that is not E.164 → a permanent error before any request', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const before = twilio.requests.length;
    await expect(channel.send({ workspaceId, messageId: randomUUID(), to: SENDER, content: { kind: 'text', body: 'x' }, mediaUrls: [] })).rejects.toThrow(/no Twilio integration/);
    const { message } = await configured();
    const requestsAfterSave = twilio.requests.length;
    await expect(channel.send(message({ to: '0044 20 7946 0000' }))).rejects.toBeInstanceOf(PermanentSendError);
    expect(twilio.requests.length).toBe(requestsAfterSave);
    expect(requestsAfterSave).toBe(before + 1);
  });
});
