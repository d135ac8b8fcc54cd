import { UNSUBSCRIBE_PATH } from './list-unsubscribe';

/**
 * What no log line may carry, as pino `redact` options: one list for every process (the API and the
 * worker build their loggers with it). pino applies it after its serializers, so it sees the request
 * log's `req.headers` and `res.headers` and the error serializer's copy of every enumerable field.
 *
 * Paths are written out rather than matched at any depth (`*.*.token`): deep wildcards cost pino
 * about 20 µs on every request log line, these cost next to nothing when the object is absent.
 */
export const REDACTED = '[Redacted]';

/** Headers that authenticate or sign a request (Bearer keys, cookies, X-Twilio-Signature, secret tokens). */
const SENSITIVE_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|signature|token|secret|api-?key|session/i;

/** Fields that hold credentials, or file contents (base64 attachments), wherever a body or input is logged. */
const SECRET_FIELDS = [
  'apiKey',
  'secret',
  'signingSecret',
  'authToken',
  'botToken',
  'tokenAuth',
  'accessToken',
  'token',
  'password',
  'privateKey',
  'masterKey',
  'keyring',
  'content',
];

/** The names a request body or an input object is logged under. */
const BODY_OBJECTS = ['body', 'input', 'payload', 'data'];

/**
 * Database errors carry the statement and its bind values (`sql`, `parameters`), the conflicting values
 * (`detail`: "Key (email)=(ann@example.org) already exists", `fields`), the offending input (`where`:
 * "JSON data, line 1: ...") and, for Sequelize validation errors, each value and row (`errors[*]`, which
 * pino's error serializer copies to `aggregateErrors`). Sequelize keeps the driver's error twice
 * (`original`, `parent`); a cause may be one too.
 */
const ERROR_FIELDS = [
  'sql',
  'parameters',
  'detail',
  'where',
  'internalQuery',
  'fields',
  ...['errors', 'aggregateErrors'].flatMap((list) => [`${list}[*].value`, `${list}[*].instance`]),
];
const ERROR_OBJECTS = ['err', 'err.original', 'err.parent', 'err.cause', 'err.cause.original', 'err.cause.parent'];

const HEADER_OBJECTS = ['req.headers', 'res.headers'];

/**
 * Public links whose path carries a capability: whoever holds an unsubscribe link can use it, so the
 * token after the prefix never reaches the request log (its `req.url`, and `req.params` once routed).
 */
const TOKEN_IN_URL = new RegExp(`^(${UNSUBSCRIBE_PATH}/)[^/?#]+`);
const URL_FIELDS = ['req.url', 'req.params.token'];

export const LOG_REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...BODY_OBJECTS.flatMap((object) => [
    ...SECRET_FIELDS.map((field) => `${object}.${field}`),
    `${object}.attachments[*].content`,
    // POST /emails/batch
    `${object}.emails[*].attachments[*].content`,
  ]),
  ...ERROR_OBJECTS.flatMap((object) => ERROR_FIELDS.map((field) => `${object}.${field}`)),
  // Every header is visited, and the censor keeps those that are not sensitive.
  ...HEADER_OBJECTS.map((object) => `${object}.*`),
  ...URL_FIELDS,
];

function isHeader(path: readonly string[]): boolean {
  return path.length === 3 && (path[0] === 'req' || path[0] === 'res') && path[1] === 'headers';
}

/**
 * Replaces a matched value, except an ordinary header (host, content-type, ...), which stays readable, and
 * a URL, which loses only a token it carries.
 */
export function censorLogValue(value: unknown, path: readonly string[]): unknown {
  if (isHeader(path) && !SENSITIVE_HEADER.test(path[2])) return value;
  if (path.length === 2 && path[0] === 'req' && path[1] === 'url' && typeof value === 'string') return value.replace(TOKEN_IN_URL, `$1${REDACTED}`);
  return REDACTED;
}

/** pino's `redact` option. */
export const logRedaction = { paths: [...LOG_REDACT_PATHS], censor: censorLogValue };
