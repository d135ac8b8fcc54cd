/**
 * The closed list of error codes the service answers with. Every failure that reaches a client is an
 * AppError carrying one of these; the HTTP edge maps each code to exactly one status in one place.
 */
export const ERROR_CODES = [
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
  // A server the workspace configured (its analytics product) refused or failed a call made on its behalf.
  'upstream_error',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Field-level validation failures in the spec's flattened shape. */
export interface ValidationIssues {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra body fields the spec defines for this code (need, limit, contactIds, ...). */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, details: Record<string, unknown> = {}) {
    super(message ?? code);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  static validation(issues: ValidationIssues): AppError {
    return new AppError('validation_error', 'Invalid request', { issues });
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
