import { MessagingApiError } from '@messaging-backend/client';
import type { Output } from './output';

/**
 * Exit codes, the same for every command (the README lists them):
 * 0 done; 1 an error (the API refused, the service is unreachable, bad usage, a send not confirmed, a follow
 * timed out); 2 the command worked and the answer is a negative verdict (the message failed or bounced, the
 * domain is not verified), so a script can tell "no" from "broken".
 */
export const EXIT = { ok: 0, error: 1, negative: 2 } as const;

/** An error the CLI itself raises, with the message a person reads and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly code = 'cli_error',
  ) {
    super(message);
  }
}

/** The API's validation body: which field failed and why. */
interface FieldErrors {
  formErrors?: string[];
  fieldErrors?: Record<string, string[] | undefined>;
}

/** Prints an error (the API's code and message first) and answers the exit code. */
export function reportError(error: unknown, output: Output): number {
  if (error instanceof MessagingApiError) {
    const details = error.details;
    if (output.json) {
      output.note(JSON.stringify({ error: { status: error.status, code: error.code, message: error.message, details: error.details, requestId: error.requestId } }));
      return EXIT.error;
    }
    const status = error.status ? ` (HTTP ${error.status})` : '';
    const lines = detailLines(details);
    // The client's validation message lists every field on one line; a terminal reads better one field a line.
    const message = error.code === 'validation_error' && lines.length ? 'Invalid request' : error.message;
    output.note(`${output.color.red(output.color.bold(`error: ${error.code}`))}${status}: ${message}`);
    for (const line of lines) output.note(`  ${line}`);
    if (error.retryAfterSeconds !== undefined) output.note(`  retry after ${error.retryAfterSeconds}s`);
    if (error.requestId && error.status >= 500) output.note(`  request id ${error.requestId} (quote it when reporting this)`);
    return EXIT.error;
  }
  const cliError = error instanceof CliError ? error : new CliError(error instanceof Error ? error.message : String(error));
  if (output.json) output.note(JSON.stringify({ error: { code: cliError.code, message: cliError.message } }));
  else output.note(`${output.color.red(output.color.bold(`error: ${cliError.code}`))}: ${cliError.message}`);
  return cliError.exitCode;
}

/** The lines worth showing under an API error: each failing field, the scope a key lacks, the quota figures. */
function detailLines(details: Record<string, unknown>): string[] {
  const lines: string[] = [];
  const validation = (isRecord(details.error) ? details.error : details) as FieldErrors;
  for (const message of validation.formErrors ?? []) lines.push(message);
  for (const [field, messages] of Object.entries(validation.fieldErrors ?? {})) lines.push(`${field}: ${(messages ?? []).join('; ')}`);
  if (typeof details.need === 'string') lines.push(`the key needs the scope ${details.need}`);
  if (typeof details.limit === 'number' && typeof details.used === 'number') lines.push(`used ${details.used} of ${details.limit}`);
  return lines;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
