import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { isMessagingApiError, type MessagingClient } from '@messaging-backend/client';
import type { Grant, ToolAccess } from './scopes';

/** What a tool's run needs besides its arguments: the typed client, and the key's grants (a tool with two routes picks by them). */
export interface ToolContext {
  client: MessagingClient;
  grants: readonly Grant[];
}

export interface ToolDefinition<S extends z.ZodObject> {
  /** snake_case, the verb first: what an agent calls. */
  name: string;
  title: string;
  /** Written for an agent: what the tool does, when to use it, what it answers, and what to do next. */
  description: string;
  /** The scope the API asks of the route(s) the tool calls; the server offers the tool only to a key that holds it. */
  access: ToolAccess;
  input: S;
  annotations?: ToolAnnotations;
  /** Calls the API and answers what the agent reads, as compact JSON. Throws MessagingApiError on an API error. */
  run: (context: ToolContext, args: z.infer<S>) => Promise<unknown>;
}

/** A tool ready to be registered; its input type stays inside, so tools of different inputs sit in one list. */
export interface McpTool {
  name: string;
  access: ToolAccess;
  register: (server: McpServer, context: ToolContext) => void;
}

export function defineTool<S extends z.ZodObject>(definition: ToolDefinition<S>): McpTool {
  return {
    name: definition.name,
    access: definition.access,
    register(server, context) {
      // Widened to any object schema, so the SDK's callback type resolves; the SDK parses the arguments with this very schema.
      const inputSchema: z.ZodObject = definition.input;
      server.registerTool(
        definition.name,
        { title: definition.title, description: definition.description, inputSchema, annotations: definition.annotations },
        async (args) => answer(() => definition.run(context, args as z.infer<S>)),
      );
    },
  };
}

/** The tool's answer as one compact JSON text; any failure as a tool error the agent can read and act on, never a crash. */
export async function answer(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const result = await run();
    return { content: [{ type: 'text', text: JSON.stringify(result ?? null) }] };
  } catch (error) {
    return { isError: true, content: [{ type: 'text', text: describeError(error) }] };
  }
}

/**
 * `code: message`, then the details an agent can act on (a 403's `need`, a 422's fieldErrors, a quota's
 * limit and used) as JSON, and the request id an operator finds the call by.
 */
export function describeError(error: unknown): string {
  if (isMessagingApiError(error)) {
    const details = Object.keys(error.details).length > 0 ? ` ${JSON.stringify(error.details)}` : '';
    const request = error.requestId ? ` (request ${error.requestId})` : '';
    return `${error.code}: ${error.message}${details}${request}`;
  }
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}
