import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, type ErrorCode, isAppError, type ValidationIssues } from '../../core/errors';
import { isCancelledStatement, isDatabaseUnavailable } from '../../db/sequelize';

/** The one place that maps an error code to an HTTP status. */
export function statusFor(code: ErrorCode): number {
  switch (code) {
    case 'validation_error':
      return 422;
    case 'invalid_json':
      return 400;
    case 'payload_too_large':
      return 413;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'conflict':
    case 'suppressed':
    case 'ambiguous_identities':
      return 409;
    case 'domain_not_verified':
      return 403;
    case 'template_not_found':
    case 'template_invalid':
    case 'too_many_recipients':
    case 'attachment_rejected':
    case 'confirmation_required':
    case 'confirmation_invalid':
      return 422;
    case 'rate_limit_exceeded':
      return 429;
    case 'quota_exceeded':
      return 402;
    case 'service_unavailable':
      return 503;
    case 'upstream_error':
      return 502;
    case 'internal_error':
      return 500;
  }
}

/** The spec's error bodies: most are `{ error, message }`; validation, scope and rate limit have their own. */
export function errorBody(error: AppError): Record<string, unknown> {
  switch (error.code) {
    case 'validation_error':
      return { error: error.details.issues as ValidationIssues };
    case 'forbidden':
      return { error: 'forbidden', need: error.details.need };
    case 'rate_limit_exceeded':
      return { error: 'rate_limit_exceeded', limit: error.details.limit, retryAfter: error.details.retryAfter };
    default:
      return { error: error.code, message: error.message, ...error.details };
  }
}

/** body-parser reports its own failures with a `type`; they become the decisions' 400 and 413. */
function fromBodyParser(err: unknown): AppError | null {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') return new AppError('invalid_json', 'The request body is not valid JSON');
  if (type === 'entity.too.large') return new AppError('payload_too_large', 'The request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new AppError('invalid_json', 'The request body encoding is not supported');
  }
  return null;
}

/**
 * A statement Postgres cancelled at the API's statement timeout: the service is overloaded for this request,
 * not broken. A database that cannot be reached (restarting after a crash, a failover) is the same kind of
 * answer: 503, try again; a 500 would tell the client the request itself is at fault. A send's retry with
 * its idempotency key is safe either way (the fault suite's postgres-crash scenario).
 */
function fromDatabase(err: unknown): AppError | null {
  if (isCancelledStatement(err)) return new AppError('service_unavailable', 'The request took too long to answer; try again later or narrow it');
  if (isDatabaseUnavailable(err)) return new AppError('service_unavailable', 'The database cannot be reached right now; try again in a moment');
  return null;
}

export const renderErrors: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  const unavailable = fromDatabase(err);
  // The stack names the repository function whose statement ran too long, or the cause of the outage.
  if (unavailable) req.log.warn({ err }, isCancelledStatement(err) ? 'statement cancelled at DB_STATEMENT_TIMEOUT_MS (AUDIENCE_STATEMENT_TIMEOUT_MS for audience queries)' : 'database unavailable');
  const known = isAppError(err) ? err : (fromBodyParser(err) ?? unavailable);
  if (known) {
    // Every 429 says when to come back, whichever limit answered it (the key's, the workspace's, a full queue).
    if (known.code === 'rate_limit_exceeded' && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(known.details.retryAfter ?? 1));
    res.status(statusFor(known.code)).json(errorBody(known));
    return;
  }
  // Unknown errors never leak their message; the request id ties the 500 to the logged cause.
  req.log.error({ err }, 'unhandled error');
  res.status(500).json({ error: 'internal_error', message: 'Internal error', requestId: req.id });
};

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new AppError('not_found', `No route for ${req.method} ${req.path}`));
};
