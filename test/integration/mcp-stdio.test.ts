import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

/**
 * The server as an MCP client (Claude Desktop, an IDE) starts it: `npm run mcp`'s command as a child process
 * speaking the protocol on stdin and stdout, configured only through its environment.
 */
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const BIN = join(process.cwd(), 'packages', 'mcp', 'src', 'bin.ts');

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

describe('the messaging-mcp bin over stdio', () => {
  it('an agent spawning it with an email:send key lists only its tools, and its send_email goes out (status sent)', async () => {
    const { workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const { apiKey } = await createTestKey(stack.api, workspaceId, ['email:send']);
    const transport = new StdioClientTransport({
      command: TSX,
      args: [BIN],
      env: { ...getDefaultEnvironment(), MESSAGING_API_KEY: apiKey, MESSAGING_BASE_URL: stack.api.url },
      stderr: 'pipe',
    });
    const agent = new Client({ name: 'stdio-agent', version: '1.0.0' });
    try {
      await agent.connect(transport);
      expect(agent.getServerVersion()).toMatchObject({ name: 'messaging' });
      expect((await agent.listTools()).tools.map((tool) => tool.name)).toEqual(['send_email', 'get_message', 'get_usage']);

      const result = await agent.callTool({ name: 'send_email', arguments: { from: `orders@${domain}`, to: 'ann@example.org', subject: 'Over stdio', text: 'Hello' } });
      expect(result.isError).toBeFalsy();
      const accepted = JSON.parse((result.content as Array<{ text: string }>)[0].text) as { id: string; status: string };
      expect(accepted.status).toBe('queued');
      expect(await stack.waitForStatus(workspaceId, accepted.id, ['sent'])).toBe('sent');
    } finally {
      await agent.close();
    }
  });

  it('started without MESSAGING_API_KEY → exits 1 at once, saying so on stderr (stdout, the protocol\'s, stays empty)', async () => {
    const env = { ...getDefaultEnvironment(), MESSAGING_BASE_URL: stack.api.url };
    const run = promisify(execFile)(TSX, [BIN], { env, timeout: 30_000 });
    await expect(run).rejects.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('MESSAGING_API_KEY') });
  });

  it('started with a key the API does not know → exits 1 with the API\'s unauthorized', async () => {
    const env = { ...getDefaultEnvironment(), MESSAGING_API_KEY: 'sk_live_not_a_real_key_000000000000000000', MESSAGING_BASE_URL: stack.api.url };
    const run = promisify(execFile)(TSX, [BIN], { env, timeout: 30_000 });
    await expect(run).rejects.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('unauthorized: ') });
  });
});
