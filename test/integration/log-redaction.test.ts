import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { configKeyring } from '../../core/config';
import { macKeys } from '../../core/secrets';
import { unsubscribeTokens } from '../../core/unsubscribe-token';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

/**
 * Every log line the API writes while serving requests that carry secrets: the caller's key, a webhook
 * secret that reaches a failing SQL statement as a bind value, and a base64 attachment. None of them
 * may appear; the request id and the status must.
 */
describe('request and error logs carry no secrets', () => {
  let api: ApiHarness;
  const lines: string[] = [];
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;

  beforeAll(async () => {
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    api = await startApi({}, {
      logStream,
      // A handler whose statement fails with the caller's key and a secret as bind values, as a repository
      // writing an integration's credentials would: Sequelize puts both on the error it throws.
      extend: (router, edge) => {
        router.post('/test/failing-secret-write', ...edge, async (req) => {
          const key = req.header('authorization')?.replace(/^Bearer /, '');
          await api.db.query('INSERT INTO no_such_integrations (api_key, secret) VALUES ($1, $2)', { bind: [key, webhookSecret] });
        });
      },
    });
  });
  afterAll(() => api.close());

  /** Sends a request with its own request id and returns the log lines about it, once its request log is written. */
  async function logged(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; requestId: string; text: string; answer: string }> {
    const requestId = `redaction-${randomUUID()}`;
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId, cookie: `session=${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.text();
    // pino-http writes the request log when the response finishes, which may be after the client has it.
    const deadline = Date.now() + 2_000;
    const about = () => lines.filter((line) => line.includes(requestId));
    while (!about().some((line) => line.includes('"statusCode"')) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
    return { status: response.status, requestId, text: about().join('\n'), answer };
  }

  function expectNoSecrets(text: string, ...secrets: string[]) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }

  it('a normal keyed request logs its id and status, not the key', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const { status, requestId, text } = await logged('GET', '/api/v1/usage', apiKey);
    expect(status).toBe(200);
    expect(text).toContain(`"id":"${requestId}"`);
    expect(text).toContain('"statusCode":200');
    expect(text).toContain('"authorization":"[Redacted]"');
    expectNoSecrets(text, apiKey);
  });

  it('a request answered 422 logs its id and status, not the key', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const { status, text } = await logged('POST', '/api/v1/api-keys', apiKey, { scopes: ['not:a-scope'], name: apiKey });
    expect(status).toBe(422);
    expect(text).toContain('"statusCode":422');
    expectNoSecrets(text, apiKey);
  });

  it('a 500 whose SQL error carries the key and a secret as bind values logs the cause without either', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const { status, requestId, text } = await logged('POST', '/api/v1/test/failing-secret-write', apiKey, {});
    expect(status).toBe(500);
    expect(text).toContain('"statusCode":500');
    // The cause stays findable by the request id the client was given.
    expect(text).toContain('relation \\"no_such_integrations\\" does not exist');
    expect(text).toContain(`"id":"${requestId}"`);
    expect(text).toContain('"parameters":"[Redacted]"');
    expectNoSecrets(text, apiKey, webhookSecret);
  });

  it('a send with an inline base64 attachment logs neither the key nor the file', async () => {
    const { apiKey, domain } = await createTestWorkspace(api, { domain: true });
    const content = randomBytes(3_000).toString('base64');
    const { status, text } = await logged('POST', '/api/v1/emails', apiKey, {
      from: `a@${domain}`,
      to: 'ann@example.org',
      subject: 'Your invoice',
      text: 'Attached.',
      attachments: [{ filename: 'invoice.pdf', content }],
      idempotencyKey: `redaction-${randomUUID()}`,
    });
    expect(status).toBe(202);
    expect(text).toContain('"statusCode":202');
    expectNoSecrets(text, apiKey, content, content.slice(0, 64));
  });

  it('an unsubscribe link used on the public endpoint leaves its token out of the request log', async () => {
    const { apiKey, workspaceId } = await createTestWorkspace(api);
    const [messageId] = await queueMessages(api.db, workspaceId, { kind: 'campaign', count: 1, from: 'news@example.com', toPrefix: 'logged' });
    const token = unsubscribeTokens(macKeys(configKeyring(api.config))).sign({ workspaceId, messageId, address: 'logged-0@example.org' });
    for (const method of ['GET', 'POST']) {
      const { status, text } = await logged(method, `/unsubscribe/${token}`, apiKey);
      expect(status).toBe(200);
      expect(text).toContain('"url":"/unsubscribe/[Redacted]"');
      expectNoSecrets(text, token);
    }
  });

  it('creating a webhook and rotating its secret log neither secret', async () => {
    const { apiKey } = await createTestWorkspace(api);
    // A public address written as such: the URL check needs no resolver.
    const created = await fetch(`${api.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://93.184.216.34/hooks', events: ['*'] }),
    });
    const { webhook, secret } = (await created.json()) as { webhook: { id: string }; secret: string };
    expect(secret).toMatch(/^whsec_/);
    const { status, text, answer } = await logged('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, apiKey);
    expect(status).toBe(200);
    expect(text).toContain('"statusCode":200');
    const rotated = (JSON.parse(answer) as { secret: string }).secret;
    expectNoSecrets(lines.join('\n'), secret.slice(6), rotated.slice(6));
  });
});
