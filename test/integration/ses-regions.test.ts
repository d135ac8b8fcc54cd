import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { createSesChannel } from '../../providers/ses/send';
import { createSesClients } from '../../providers/ses/clients';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import { configKeyring } from '../../core/config';
import { sealSecret } from '../../core/secrets';
import { insertDomain } from '../../db/repositories/domains';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

/** What moto stored: every raw message SES v2 accepted, in any region. */
async function motoRawMessageIds(): Promise<string[]> {
  const endpoint = process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:5056';
  const data = (await (await fetch(`${endpoint}/moto-api/data.json`)).json()) as { ses?: { RawMessage?: Array<{ id: string }> } };
  return (data.ses?.RawMessage ?? []).map((message) => message.id);
}

describe('SES clients per region', () => {
  let stack: EmailStack;
  beforeAll(async () => {
    stack = await startEmailStack({ overrides: { EMAIL_PROVIDER: 'ses', SNS_TOPIC_ARNS: 'arn:aws:sns:us-east-1:123456789012:ses-events' } });
  });
  afterAll(() => stack?.close());

  it('a domain in eu-west-1 sends through the eu-west-1 client: moto knows its identity only there, and accepts the mail', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: { region: 'eu-west-1' } });
    // moto keeps SES state per region: a send through the us-east-1 client (AWS_REGION) would be MessageRejected.
    await new SESv2Client({ region: 'eu-west-1' }).send(new CreateEmailIdentityCommand({ EmailIdentity: domain }));
    // Another workspace's pending claim of the same name, in another region, is not the sender's domain.
    const other = await createTestWorkspace(stack.api);
    const key = await generateDkimKeyPair();
    await insertDomain(stack.api.db, other.workspaceId, {
      name: domain,
      region: 'ap-southeast-2',
      defaultFromName: null,
      dkimSelector: key.selector,
      dkimPublicKey: key.publicKey,
      dkimPrivateKeySealed: sealSecret(configKeyring(stack.api.config), { workspaceId: other.workspaceId, column: 'domains.dkim_private_key', row: domain }, key.privateKeyPem),
    });

    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'ann@example.org', subject: 'S', text: 'T', idempotencyKey: `k-${randomUUID()}` },
    });
    const id = (accepted.body as { id: string }).id;
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    const status = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    const { providerMessageId } = status.body as { providerMessageId: string };
    expect(await motoRawMessageIds()).toContain(providerMessageId);
  });
});

describe('SES calls have bounded waits', () => {
  let server: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and never answers: SES hung mid-request.
    server = createServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a hung SES call fails after the request timeout, for each of maxAttempts tries, as the provider unavailable (its breaker counts it) instead of waiting for ever', async () => {
    const clients = createSesClients({
      timeouts: { connectionTimeoutMs: 1_000, requestTimeoutMs: 500, maxAttempts: 2 },
      overrides: { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } },
    });
    const channel = createSesChannel({ clients, sendingRegion: async () => 'eu-west-1' });
    const mailbox = { name: null, address: 'a@mail.example.com' };
    const email = { messageId: randomUUID(), from: mailbox, to: [mailbox], cc: [], bcc: [], replyTo: [], subject: 'S', headers: {}, attachments: [] };
    const started = Date.now();
    await expect(channel.send(email, Buffer.from('Subject: S\r\n\r\nT'))).rejects.toMatchObject({ name: 'ProviderUnavailableError', cause: { name: 'TimeoutError' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sockets).toHaveLength(2);
    await channel.close();
  });

  it('one client per region, made on first use and reused', () => {
    const clients = createSesClients();
    const eu = clients.forRegion('eu-west-1');
    expect(clients.forRegion('eu-west-1')).toBe(eu);
    expect(clients.forRegion('us-east-1')).not.toBe(eu);
    clients.destroy();
  });
});
