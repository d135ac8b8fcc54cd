/**
 * The service's closed list of error codes (the `error` field of every error body). A copy of the server's
 * `core/errors.ts` list, because this package is published on its own; a unit test fails when they differ.
 */
export const API_ERROR_CODES = [
  'validation_error',
  'invalid_json',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'domain_not_verified',
  'suppressed',
  'template_not_found',
  'template_invalid',
  'too_many_recipients',
  'attachment_rejected',
  'ambiguous_identities',
  'confirmation_required',
  'confirmation_invalid',
  'rate_limit_exceeded',
  'quota_exceeded',
  'service_unavailable',
  'upstream_error',
  'internal_error',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * Codes the client itself gives when no answer came: `network_error` (the connection failed, was reset, or
 * timed out before a response), and `unexpected_response` (a body that is not the service's error shape,
 * for example an HTML page from a proxy).
 */
export type ClientErrorCode = 'network_error' | 'unexpected_response';

/**
 * Every code a MessagingApiError can carry. `string & {}` keeps the known codes in editor completion while
 * admitting a code a newer server may add, so a switch over codes must keep a default branch.
 */
export type MessagingErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

/** The flattened zod issues of a 422 validation_error: `{ formErrors, fieldErrors: { field: [messages] } }`. */
export interface ValidationIssues {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export interface MessagingApiErrorInit {
  status: number;
  code: MessagingErrorCode;
  message?: string;
  details?: Record<string, unknown>;
  requestId?: string;
  retryAfterSeconds?: number;
  body?: unknown;
  cause?: unknown;
}

/**
 * A refusal by the service (any non-2xx answer), or a request that got no answer at all (`status` 0, code
 * `network_error`). Branch on `code`, not on `message`: codes are the contract, messages may change.
 */
export class MessagingApiError extends Error {
  /** The HTTP status; 0 when no response arrived (network_error). */
  readonly status: number;
  readonly code: MessagingErrorCode;
  /**
   * The body's fields other than `error` and `message`: `need` (403 forbidden), `limit`, `used`, `remaining`,
   * `plan` (402 quota_exceeded), `contactIds` (409 ambiguous_identities), `retryAfter` (429); for a 422
   * validation_error, `formErrors` and `fieldErrors`.
   */
  readonly details: Record<string, unknown>;
  /** The X-Request-Id the service answered with: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** From the Retry-After header (429, 503), in seconds. */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed body as received, for anything the fields above leave out. */
  readonly body: unknown;

  constructor(init: MessagingApiErrorInit) {
    super(init.message ?? init.code, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'MessagingApiError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
  }

  /** The field errors of a validation_error (empty otherwise): `{ to: ['Invalid email'] }`. */
  get fieldErrors(): Record<string, string[]> {
    const fieldErrors = this.details.fieldErrors;
    return isRecord(fieldErrors) ? (fieldErrors as Record<string, string[]>) : {};
  }

  /** Whether the service may answer differently if the same request is sent again later. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status === 503;
  }

  /** Builds the error from a non-2xx response and its parsed body (JSON, text, or nothing). */
  static fromResponse(response: Response, body: unknown): MessagingApiError {
    const requestId = response.headers.get('x-request-id') ?? stringField(body, 'requestId');
    const retryAfterSeconds = retryAfterSecondsOf(response.headers.get('retry-after'));
    const base = { status: response.status, requestId, retryAfterSeconds, body };
    if (!isRecord(body)) {
      return new MessagingApiError({ ...base, code: 'unexpected_response', message: `HTTP ${response.status} without the service's error body` });
    }
    const { error, message, ...rest } = body;
    // A validation failure carries its issues in place of the code (the spec's flattened shape).
    if (isRecord(error)) {
      return new MessagingApiError({ ...base, code: 'validation_error', message: validationMessage(error), details: { ...rest, ...error } });
    }
    if (typeof error !== 'string') {
      return new MessagingApiError({ ...base, code: 'unexpected_response', message: `HTTP ${response.status} without an error code`, details: rest });
    }
    return new MessagingApiError({ ...base, code: error, message: typeof message === 'string' ? message : error, details: rest });
  }

  /** A request that got no response: refused connection, reset, DNS failure, or a timeout. */
  static network(cause: unknown): MessagingApiError {
    const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    return new MessagingApiError({ status: 0, code: 'network_error', message: `No response from the Messaging API: ${reason}`, cause });
  }
}

export function isMessagingApiError(value: unknown): value is MessagingApiError {
  return value instanceof MessagingApiError;
}

/**
 * Retry-After in seconds: either delay-seconds or an HTTP date (RFC 9110 §10.2.3). Undefined when absent or
 * unreadable; a date in the past is 0.
 */
export function retryAfterSecondsOf(header: string | null | undefined, now: number = Date.now()): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  // An HTTP date always names its day and month; anything else (a negative number) is not one.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function validationMessage(issues: Record<string, unknown>): string {
  const parts: string[] = [];
  if (Array.isArray(issues.formErrors)) parts.push(...issues.formErrors.filter((e): e is string => typeof e === 'string'));
  if (isRecord(issues.fieldErrors)) {
    for (const [field, errors] of Object.entries(issues.fieldErrors)) {
      if (Array.isArray(errors)) parts.push(`${field}: ${errors.join(', ')}`);
    }
  }
  return parts.length > 0 ? `Invalid request: ${parts.join('; ')}` : 'Invalid request';
}

function stringField(body: unknown, key: string): string | undefined {
  return isRecord(body) && typeof body[key] === 'string' ? body[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
