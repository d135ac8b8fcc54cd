import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { ANSI, plain, runCliInPty, runCliPiped } from '../helpers/pty';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { createTestWorkspace } from '../helpers/workspaces';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/**
 * The CLI as a person and a script use it, against the real stack (API on an ephemeral port, dispatcher,
 * workers, an SMTP sink as the provider): sends and follows in a pseudo-terminal, machine output through pipes.
 */
describe('cli: sends, follow, usage, errors and webhook deliveries', () => {
  let stack: EmailStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  async function workspace() {
    const created = await createTestWorkspace(stack.api, { domain: true });
    return { ...created, env: { MESSAGING_BASE_URL: stack.api.url, MESSAGING_API_KEY: created.apiKey } };
  }

  const emailArgs = (domain: string, to: string) => ['send', 'email', '--from', `CLI <cli@${domain}>`, '--to', to, '--subject', 'From the CLI', '--text', 'Hello'];

  it('send email in a terminal prints the id and queued in colour, and messages follow ends on sent with exit 0', async () => {
    const { domain, env } = await workspace();
    const send = runCliInPty(emailArgs(domain, 'ann@example.org'), env);
    const sent = await send.exited;
    expect(sent.exitCode).toBe(0);
    expect(sent.output).toMatch(ANSI);
    const id = plain(sent.output).match(new RegExp(`^id\\s+(${UUID.source})$`, 'm'))?.[1];
    expect(id).toBeDefined();
    expect(plain(sent.output)).toMatch(/^status\s+queued$/m);

    const follow = runCliInPty(['messages', 'follow', id!, '--interval', '200'], env);
    const followed = await follow.exited;
    expect(followed.exitCode).toBe(0);
    const lines = plain(followed.output).split('\n');
    // The sent event comes before the final status line, and following stops there.
    const sentEvent = lines.findIndex((line) => /event\s+sent/.test(line));
    const sentStatus = lines.findIndex((line) => /status\s+sent/.test(line));
    expect(sentEvent).toBeGreaterThanOrEqual(0);
    expect(sentStatus).toBeGreaterThan(sentEvent);
    expect(followed.output).toMatch(ANSI);
    expect(stack.sink.received.some((mail) => mail.recipients.includes('ann@example.org'))).toBe(true);
  });

  it('send message on the email channel prints the id, status and channel, and follow reads it to sent', async () => {
    const { domain, env } = await workspace();
    const sent = await runCliPiped(['send', 'message', '--channel', 'email', '--to', 'dan@example.org', '--from', `cli@${domain}`, '--subject', 'Hi', '--text', 'Hello', '--json'], env);
    expect(sent.exitCode).toBe(0);
    const accepted = JSON.parse(sent.stdout) as { id: string; status: string; channel: string; idempotencyKey: string };
    // No --idempotency-key: the client made one, and the answer carries it.
    expect(accepted).toMatchObject({ id: expect.stringMatching(UUID), status: 'queued', channel: 'email', idempotencyKey: expect.any(String) });
    const followed = await runCliPiped(['messages', 'follow', accepted.id, '--interval', '200'], env);
    expect(followed.exitCode).toBe(0);
    expect(followed.stdout).toMatch(/status\s+sent\n$/);
  });

  it('messages follow of a message the provider refuses for good ends on that status with exit 2, as NDJSON with --json', async () => {
    const { domain, env } = await workspace();
    stack.sink.refuseRecipients((address) => (address === 'gone@example.org' ? [550, '5.1.1 User unknown'] : null));
    try {
      const sent = await runCliPiped([...emailArgs(domain, 'gone@example.org'), '--json'], env);
      const { id } = JSON.parse(sent.stdout) as { id: string };
      const followed = await runCliPiped(['messages', 'follow', id, '--interval', '200', '--json'], env);
      expect(followed.exitCode).toBe(2);
      const lines = followed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; status?: string });
      // One JSON document a line: the refusal's event, then the end status.
      expect(lines).toContainEqual({ type: 'event', event: expect.objectContaining({ type: expect.stringMatching(/^(failed|bounce)$/) }) });
      expect(lines.at(-1)).toMatchObject({ type: 'status', status: expect.stringMatching(/^(failed|bounced)$/) });
      expect(followed.stdout + followed.stderr).not.toMatch(ANSI);
    } finally {
      stack.sink.refuseRecipients(() => null);
    }
  });

  it('--json and a pipe print plain JSON without colours; NO_COLOR turns them off in a terminal', async () => {
    const { domain, env } = await workspace();
    const piped = await runCliPiped(emailArgs(domain, 'bob@example.org'), env);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout + piped.stderr).not.toMatch(ANSI);
    expect(piped.stdout).toMatch(/^id\s+/m);

    const json = await runCliPiped([...emailArgs(domain, 'bob@example.org'), '--json', '--idempotency-key', 'cli-json-key-1'], env);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: expect.stringMatching(UUID), status: 'queued', idempotencyKey: 'cli-json-key-1' });
    // The same key again: the API's duplicate answer with the first id, still plain JSON.
    const repeat = await runCliPiped([...emailArgs(domain, 'bob@example.org'), '--json', '--idempotency-key', 'cli-json-key-1'], env);
    expect(JSON.parse(repeat.stdout)).toMatchObject({ id: JSON.parse(json.stdout).id, status: 'duplicate' });

    const inTerminal = await runCliInPty(['--json', 'usage'], env).exited;
    expect(inTerminal.exitCode).toBe(0);
    expect(inTerminal.output).not.toMatch(ANSI);
    expect(JSON.parse(plain(inTerminal.output))).toMatchObject({ plan: 'free', messages: { used: 2 } });

    const noColor = await runCliInPty(['usage'], { ...env, NO_COLOR: '1' }).exited;
    expect(noColor.exitCode).toBe(0);
    expect(noColor.output).not.toMatch(ANSI);
    expect(plain(noColor.output)).toMatch(/^used\s+2 of 3000 messages \(0%\)$/m);
  });

  it('an API refusal prints its code, message and failing field, and exits 1', async () => {
    const { env } = await workspace();
    const refused = await runCliInPty(['send', 'email', '--from', 'cli@not-ours.example.net', '--to', 'ann@example.org', '--subject', 'x', '--text', 'x'], env).exited;
    expect(refused.exitCode).toBe(1);
    expect(plain(refused.output)).toMatch(/^error: domain_not_verified \(HTTP 403\): /m);

    const invalidShown = await runCliInPty(['send', 'email', '--from', 'cli@not-ours.example.net', '--to', 'not an address', '--subject', 'x', '--text', 'x'], env).exited;
    expect(invalidShown.exitCode).toBe(1);
    expect(plain(invalidShown.output)).toMatch(/^error: validation_error \(HTTP 422\): Invalid request\n {2}to: \S/m);

    const invalid = await runCliPiped(['send', 'email', '--from', 'cli@not-ours.example.net', '--to', 'not an address', '--subject', 'x', '--text', 'x', '--json'], env);
    expect(invalid.exitCode).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(JSON.parse(invalid.stderr)).toMatchObject({ error: { status: 422, code: 'validation_error', details: { fieldErrors: { to: expect.any(Array) } } } });

    const noKey = await runCliPiped(['usage'], { MESSAGING_BASE_URL: stack.api.url });
    expect(noKey).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('MESSAGING_API_KEY') });
  });

  it('webhooks tail prints a delivery attempt as it happens', async () => {
    const { domain, env, call } = await workspace();
    const created = await call('POST', '/webhooks', { url: `${receiver.url}/cli-tail`, events: ['email.sent'] });
    expect(created.status).toBe(201);
    const tail = runCliInPty(['webhooks', 'tail', '--interval', '200'], env);
    try {
      await tail.waitFor('following deliveries of 1 webhook');
      expect((await runCliPiped(emailArgs(domain, 'cat@example.org'), env)).exitCode).toBe(0);
      const shown = await tail.waitFor(/succeeded\s+200\s+email\.sent\s+#1/);
      expect(shown).toContain(`${receiver.url}/cli-tail`);
      expect(tail.output()).toMatch(ANSI);
    } finally {
      tail.kill();
      await tail.exited;
    }
  });
});
