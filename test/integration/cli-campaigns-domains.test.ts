import { randomUUID } from 'node:crypto';
import { domainVerificationWorkflowId } from '../../core/ids';
import { connectTemporal } from '../../temporal/connection';
import { createList, seedContacts } from '../helpers/campaigns';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { ANSI, plain, runCliInPty, runCliPiped } from '../helpers/pty';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

interface DnsRecord {
  record: string;
  type: string;
  name: string;
  value: string;
  status: string;
}

/**
 * The CLI's commands that ask before acting or print what is left to do, in a pseudo-terminal against the
 * real stack: campaigns estimate and send (the confirmation prompt answered y and n, refused without a
 * terminal), and domains verify against a DNS server of the test's own.
 */
describe('cli: campaigns and domains', () => {
  let stack: EmailStack;
  let dns: TestDnsServer;
  const domainIds: string[] = [];

  beforeAll(async () => {
    dns = await startDnsServer();
    stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', DNS_SERVERS: dns.address } });
  });
  afterAll(async () => {
    const client = await connectTemporal(stack.api.config);
    await Promise.allSettled(domainIds.map((id) => client.workflow.getHandle(domainVerificationWorkflowId(id)).terminate('test over')));
    await client.connection.close();
    await stack.close();
    await dns.close();
  });

  /** A draft campaign to a list of three contacts, from the workspace's verified domain. */
  async function draftCampaign() {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const listId = await createList(workspace.call);
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 3, prefix: `cli-${randomUUID().slice(0, 8)}`, listId });
    const created = await workspace.call('POST', '/campaigns', { name: 'CLI sale', fromAddress: `news@${workspace.domain}`, listId, subject: 'Sale', html: '<p>Sale</p>' });
    expect(created.status).toBe(201);
    const campaignId = (created.body as { id: string }).id;
    const status = async () => ((await workspace.call('GET', `/campaigns/${campaignId}`)).body as { status: string }).status;
    return { ...workspace, campaignId, status, env: { MESSAGING_BASE_URL: stack.api.url, MESSAGING_API_KEY: workspace.apiKey } };
  }

  it('campaigns estimate prints the recipients and a confirmation token; --json gives the API\'s estimate', async () => {
    const { campaignId, env } = await draftCampaign();
    const shown = await runCliInPty(['campaigns', 'estimate', campaignId], env).exited;
    expect(shown.exitCode).toBe(0);
    expect(plain(shown.output)).toMatch(/^recipients\s+3$/m);
    expect(plain(shown.output)).toMatch(/^confirmation token\s+\S+/m);
    expect(shown.output).toMatch(ANSI);

    const json = await runCliPiped(['campaigns', 'estimate', campaignId, '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ estimate: { recipients: 3, listMembers: 3 }, confirmationToken: expect.any(String) });
  });

  it('campaigns send in a terminal answered n sends nothing and exits 1', async () => {
    const { campaignId, env, status } = await draftCampaign();
    const send = runCliInPty(['campaigns', 'send', campaignId], env);
    await send.waitFor('Send to 3 recipients? [y/N]');
    send.write('n\r');
    const ended = await send.exited;
    expect(ended.exitCode).toBe(1);
    expect(plain(ended.output)).toContain('error: not_confirmed: not confirmed: nothing was sent');
    expect(await status()).toBe('draft');
  });

  it('campaigns send interrupted with Ctrl-C at the prompt sends nothing and exits 1', async () => {
    const { campaignId, env, status } = await draftCampaign();
    const send = runCliInPty(['campaigns', 'send', campaignId], env);
    await send.waitFor('Send to 3 recipients? [y/N]');
    send.write('\x03');
    const ended = await send.exited;
    expect(ended.exitCode).toBe(1);
    expect(plain(ended.output)).toContain('nothing was sent');
    expect(await status()).toBe('draft');
  });

  it('campaigns send in a terminal answered y sends with the estimate\'s token', async () => {
    const { campaignId, env, status } = await draftCampaign();
    const send = runCliInPty(['campaigns', 'send', campaignId], env);
    await send.waitFor('Send to 3 recipients? [y/N]');
    send.write('y\r');
    const ended = await send.exited;
    expect(ended.exitCode).toBe(0);
    expect(plain(ended.output)).toMatch(/^status\s+(sending|sent)$/m);
    expect(plain(ended.output)).toMatch(/^recipients\s+3$/m);
    expect(['sending', 'sent']).toContain(await status());
  });

  it('campaigns send without a terminal refuses unless --yes is given', async () => {
    const { campaignId, env, status } = await draftCampaign();
    const refused = await runCliPiped(['campaigns', 'send', campaignId], env);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('error: confirmation_required: refusing to send to 3 recipients without confirmation');
    expect(await status()).toBe('draft');

    const confirmed = await runCliPiped(['campaigns', 'send', campaignId, '--yes', '--json'], env);
    expect(confirmed.exitCode).toBe(0);
    expect(JSON.parse(confirmed.stdout)).toMatchObject({ id: campaignId, status: expect.stringMatching(/^(sending|sent)$/), recipients: 3 });
  });

  it('domains verify prints the records still missing and exits 2, then 0 once they are published', async () => {
    const workspace = await createTestWorkspace(stack.api);
    const env = { MESSAGING_BASE_URL: stack.api.url, MESSAGING_API_KEY: workspace.apiKey };
    const { domain, domainId } = await addTestDomain(stack.api, workspace.workspaceId, { verified: false });
    domainIds.push(domainId);

    const pending = await runCliInPty(['domains', 'verify', domain], env).exited;
    expect(pending.exitCode).toBe(2);
    expect(pending.output).toMatch(ANSI);
    const shown = plain(pending.output);
    expect(shown).toMatch(new RegExp(`^${domain.replace(/\./g, '\\.')}\\s+failed$`, 'm'));
    expect(shown).toMatch(/^RECORD\s+STATUS\s+TYPE\s+NAME\s+VALUE$/m);
    for (const [record, name] of [['spf', domain], ['dkim', `._domainkey.${domain}`], ['dmarc', `_dmarc.${domain}`]]) {
      expect(shown).toMatch(new RegExp(`^${record}\\s+failed\\s+TXT\\s+\\S*${name.replace(/\./g, '\\.')}\\s+v=`, 'm'));
    }

    // Publish what the CLI said was missing (read from its --json), and ask again by id.
    const json = await runCliPiped(['domains', 'verify', domain, '--json'], env);
    expect(json.exitCode).toBe(2);
    const { missing } = JSON.parse(json.stdout) as { missing: DnsRecord[] };
    for (const record of missing.filter((r) => ['spf', 'dkim', 'dmarc'].includes(r.record))) dns.setTxt(record.name, record.value);
    const verified = await runCliInPty(['domains', 'verify', domainId], env).exited;
    expect(plain(verified.output)).toMatch(/\sverified$/m);
    expect(plain(verified.output)).not.toMatch(/^(spf|dkim|dmarc)\s/m);
    expect(verified.exitCode).toBe(0);
  });

  it('domains verify of a name the workspace does not have says so and exits 1', async () => {
    const workspace = await createTestWorkspace(stack.api);
    const missing = await runCliPiped(['domains', 'verify', 'nowhere.example.com'], { MESSAGING_BASE_URL: stack.api.url, MESSAGING_API_KEY: workspace.apiKey });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('error: not_found: no domain named nowhere.example.com in this workspace');
  });
});
