import type { Command } from 'commander';
import { createMessagingClient, type MessagingClient } from '@messaging-backend/client';
import { CliError } from './errors';
import { colorsWanted, Output } from './output';

export const DEFAULT_BASE_URL = 'http://localhost:3000';
/** Kept equal to package.json's version (a JSON import would put package.json outside the build's rootDir). */
export const CLI_VERSION = '0.1.0';

/** The options every command takes (before or after its name). */
export interface GlobalOptions {
  json?: boolean;
  apiKey?: string;
  baseUrl?: string;
}

/** What a command runs with: the typed client and where to write. */
export interface CliContext {
  client: MessagingClient;
  output: Output;
  env: NodeJS.ProcessEnv;
  /** Whether a person can answer a question (stdin is a terminal). */
  interactive: boolean;
}

/** The output alone: an error before the client exists (no key) is still printed as the user asked. */
export function outputFor(options: GlobalOptions, env: NodeJS.ProcessEnv): Output {
  const json = options.json === true;
  return new Output(json, colorsWanted(process.stdout, env, json));
}

/** Flags win over the environment; the base URL may be given with or without the /api/v1 prefix. */
export function contextFor(command: Command, env: NodeJS.ProcessEnv): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const output = outputFor(options, env);
  const apiKey = options.apiKey ?? env.MESSAGING_API_KEY;
  if (!apiKey) throw new CliError('no API key: pass --api-key or set MESSAGING_API_KEY (a workspace key, sk_...)', 1, 'missing_api_key');
  const baseUrl = (options.baseUrl ?? env.MESSAGING_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  // The client retries 429 and 503 as Retry-After says and puts an idempotency key on every send.
  const client = createMessagingClient({ baseUrl, apiKey, headers: { 'user-agent': `messaging-cli/${CLI_VERSION}` } });
  return { client, output, env, interactive: process.stdin.isTTY === true };
}

