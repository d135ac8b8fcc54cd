#!/usr/bin/env node
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createMessagingMcpServer } from './server';
import { describeError } from './tool';

/** What the MCP client (Claude Desktop, an IDE, an agent runtime) sets in the server's environment. */
const Settings = z.object({
  MESSAGING_API_KEY: z
    .string({ error: 'is not set: give the workspace API key (sk_...) the agent acts with' })
    .startsWith('sk_', 'must be a workspace API key (sk_...)'),
  MESSAGING_BASE_URL: z.url().default('http://localhost:3000'),
});

async function main(): Promise<void> {
  const parsed = Settings.safeParse(process.env);
  if (!parsed.success) {
    fail(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
    return;
  }
  const { MESSAGING_API_KEY: apiKey, MESSAGING_BASE_URL: baseUrl } = parsed.data;
  const { server, key, tools } = await createMessagingMcpServer({ baseUrl, apiKey });
  await server.connect(new StdioServerTransport());
  // stdout carries the protocol, so what a person reads goes to stderr (MCP clients show it in their logs).
  process.stderr.write(`messaging-mcp: ${baseUrl} as key ${key.name ?? key.id} (${key.scopes.join(', ')}): ${tools.join(', ')}\n`);
}

function fail(reason: string): void {
  process.stderr.write(`messaging-mcp: ${reason}\n`);
  process.exitCode = 1;
}

main().catch((error: unknown) => fail(describeError(error)));
