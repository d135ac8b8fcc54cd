import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMessagingClient, type MessagingClientOptions, unwrap } from '@messaging-backend/client';
import { toolsFor } from './catalog';
import type { Grant } from './scopes';

export const SERVER_NAME = 'messaging';
export const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS =
  'Tools of a multi-channel messaging service (email, WhatsApp, Telegram, agent inboxes, campaigns), acting for one workspace ' +
  'through its API key: only the tools that key may use are listed. Sends are accepted, then delivered in the background: follow ' +
  'one with get_message. Repeat the same idempotencyKey when you retry a send. A campaign goes out only with the confirmationToken ' +
  'of its estimate: show the estimate to the user before send_campaign. A tool error starts with the API\'s error code.';

export interface MessagingMcpServer {
  server: McpServer;
  /** The key the server acts with, as GET /api-keys/current answered. */
  key: { id: string; name: string | null; scopes: Grant[] };
  /** The names of the tools offered, in order. */
  tools: string[];
}

/**
 * An MCP server acting with one API key. It asks the API which scopes the key holds (GET /api-keys/current)
 * and registers only the tools those allow; a key that is invalid or revoked fails here, with the API's error.
 */
export async function createMessagingMcpServer(options: MessagingClientOptions): Promise<MessagingMcpServer> {
  const client = createMessagingClient(options);
  const key = await unwrap(client.GET('/api/v1/api-keys/current'));
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { instructions: INSTRUCTIONS });
  const tools = toolsFor(key.scopes);
  for (const tool of tools) tool.register(server, { client, grants: key.scopes });
  return { server, key: { id: key.id, name: key.name, scopes: key.scopes }, tools: tools.map((tool) => tool.name) };
}
