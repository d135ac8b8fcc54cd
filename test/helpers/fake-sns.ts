import { createSign, randomBytes, randomUUID } from 'node:crypto';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { generate } from 'selfsigned';

const HOST = 'sns.us-east-1.amazonaws.com';

export interface FakeSns {
  /** Give this agent to the API: it routes SNS's certificate and subscribe URLs to the local server. */
  agent: Agent;
  topicArn: string;
  /** A signed SNS Notification body carrying `message` (an SES notification), from `topicArn` unless told otherwise. */
  notification: (message: unknown, options?: { signatureVersion?: '1' | '2'; messageId?: string; topicArn?: string }) => string;
  subscriptionConfirmation: () => string;
  /** Subscription confirmations SNS received. */
  confirmations: string[];
  close: () => Promise<void>;
}

/**
 * SNS as the API meets it: messages signed with a key whose certificate is served at an SNS-shaped URL.
 * The certificate is self-signed for SNS's host name and the agent trusts only it, so the real
 * validator library runs unchanged and no request leaves the machine.
 */
export async function startFakeSns(): Promise<FakeSns> {
  const pems = await generate([{ name: 'commonName', value: HOST }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: HOST }] }],
  });
  const certPath = `/SimpleNotificationService-${randomBytes(16).toString('hex')}.pem`;
  const confirmations: string[] = [];
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    if (req.url === certPath) {
      res.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(pems.cert);
    } else if (req.url?.startsWith('/?Action=ConfirmSubscription')) {
      confirmations.push(req.url);
      res.writeHead(200).end('<ConfirmSubscriptionResponse/>');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const agent = new Agent({ keepAlive: false });
  // Every connection goes to the local server, verified against the fake SNS certificate only.
  (agent as unknown as { createConnection: typeof connect }).createConnection = ((options: object) =>
    connect({ ...options, host: '127.0.0.1', port, servername: HOST, ca: pems.cert })) as typeof connect;

  const topicArn = `arn:aws:sns:us-east-1:123456789012:ses-events-${randomUUID().slice(0, 8)}`;
  const sign = (fields: Record<string, string>, keys: string[], version: '1' | '2') => {
    const text = keys.filter((key) => fields[key] !== undefined).map((key) => `${key}\n${fields[key]}\n`).join('');
    const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
    signer.update(text, 'utf8');
    return JSON.stringify({
      ...fields,
      SignatureVersion: version,
      Signature: signer.sign(pems.private, 'base64'),
      SigningCertURL: `https://${HOST}${certPath}`,
    });
  };

  return {
    agent,
    topicArn,
    confirmations,
    notification: (message, options = {}) =>
      sign(
        {
          Type: 'Notification',
          MessageId: options.messageId ?? randomUUID(),
          TopicArn: options.topicArn ?? topicArn,
          Message: JSON.stringify(message),
          Timestamp: new Date().toISOString(),
          UnsubscribeURL: `https://${HOST}/?Action=Unsubscribe`,
        },
        ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
        options.signatureVersion ?? '1',
      ),
    subscriptionConfirmation: () =>
      sign(
        {
          Type: 'SubscriptionConfirmation',
          MessageId: randomUUID(),
          Token: 'token-123',
          TopicArn: topicArn,
          Message: 'You have chosen to subscribe to the topic.',
          SubscribeURL: `https://${HOST}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=token-123`,
          Timestamp: new Date().toISOString(),
        },
        ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
        '1',
      ),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
