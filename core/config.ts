import { z } from 'zod';
import { inboundListenerSettings } from './config-inbound';
import { DEVELOPMENT_MASTER_KEY, isPublishedMasterKey } from './published-master-keys';
import { type Keyring, keyringOf, masterKey, parseMasterKey } from './secrets';

/**
 * The one schema over the environment. Each process calls `loadConfig(process.env)` once at start and
 * passes the result down; nothing else reads `process.env`. Defaults match the project-local services
 * that `npm start` runs, so a fresh clone works without a `.env`.
 */
const booleanString = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

function isMasterKeyText(value: string): boolean {
  try {
    return parseMasterKey(value).length === 32;
  } catch {
    return false;
  }
}

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().default('http://localhost:3000'),
  DATABASE_URL: z.string().min(1).default('postgres://messaging@127.0.0.1:55432/messaging'),
  REDIS_URL: z.string().min(1).default('redis://127.0.0.1:56379/0'),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** TLS to Temporal with the system's CAs (a cluster behind TLS); implied by TEMPORAL_API_KEY. */
  TEMPORAL_TLS: booleanString.default(false),
  /** An API key for Temporal Cloud or a cluster that takes one: sent with every call, always over TLS. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** Prefixes every task queue name, so several deployments (or test runs) can share one Temporal. */
  TASK_QUEUE_PREFIX: z.string().default(''),
  /** Requests per second per API key (the spec's limit is 10; raise it only for benchmarks). */
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  /**
   * Noisy neighbours (docs/security.md): besides the per-key limit, a workspace's keys together spend at most
   * WORKSPACE_RATE_LIMIT_PER_SECOND points a second, where a route costs 1 point, a search RATE_COST_SEARCH and
   * heavy work (audience queries, exports, imports, syncs, renders) RATE_COST_HEAVY (api/http/route.ts). Heavy
   * work also holds one of the workspace's WORKSPACE_HEAVY_CONCURRENCY slots while it runs; a slot is a
   * Redis lease of HEAVY_LEASE_MS, renewed while held, so a crashed process's slots free themselves.
   */
  WORKSPACE_RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(100),
  RATE_COST_SEARCH: z.coerce.number().int().positive().default(5),
  RATE_COST_HEAVY: z.coerce.number().int().positive().default(20),
  WORKSPACE_HEAVY_CONCURRENCY: z.coerce.number().int().positive().default(2),
  HEAVY_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),
  /** Imports one workspace may have running at once; POST /imports past it answers 429 (Retry-After 30). */
  WORKSPACE_RUNNING_IMPORTS: z.coerce.number().int().positive().default(2),
  /**
   * Audience queries (segment previews, campaign estimates, segment-filtered lists and exports) run on a pool
   * of their own of AUDIENCE_POOL_SIZE connections, so they never take the connections reads and sends need,
   * and at most that many full scans take the database's cores at once per API process (size it to the cores
   * you give them; the rest wait their turn). Each statement is cancelled after AUDIENCE_STATEMENT_TIMEOUT_MS,
   * at most half the 30 s a query waits for one of those connections (db/audience-session.ts), so a queued
   * request gets its turn before it gives up.
   */
  AUDIENCE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(2),
  AUDIENCE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(15_000).default(15_000),
  /** Active API keys one workspace may hold; POST /api-keys past it answers 402 quota_exceeded (resource api_keys). */
  MAX_API_KEYS_PER_WORKSPACE: z.coerce.number().int().min(1).default(20),
  /** Largest request body of every route but those that carry inline base64 files. */
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  /**
   * Largest body of the routes that carry inline base64 files (POST /emails, /emails/batch, /attachments):
   * 25 MB of attachments is about 34 MB of base64, plus the rest of the message.
   */
  MAX_SEND_BODY_BYTES: z.coerce.number().int().positive().default(40 * 1024 * 1024),
  /** How long a looked-up API key is trusted before it is read again (revocations also evict at once). */
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  /** How long a sending domain's verified status is trusted by POST /emails before it is read again. */
  DOMAIN_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  /** Provider sends per second across all workers, kept by the shared pacer (activities/pacing.ts). */
  SEND_RATE_PER_SECOND: z.coerce.number().positive().default(14),
  /**
   * WhatsApp messages per second from one Twilio sender number (Twilio's default throughput is 80 MPS per
   * WhatsApp sender); each workspace's sender is paced on its own. Also the whatsapp channel's dispatch rate.
   */
  WHATSAPP_RATE_PER_SECOND: z.coerce.number().positive().default(80),
  /**
   * Telegram messages per second per bot (Telegram's flood limit is about 30; each chat also gets at most 1
   * per second, a limit Telegram sets and no setting changes). Also the telegram channel's dispatch rate.
   */
  TELEGRAM_RATE_PER_SECOND: z.coerce.number().positive().max(30).default(30),
  /**
   * The delivery engine (docs/delivery.md): the worker's dispatcher hands Temporal only what the provider
   * can take within the lead time: SEND_RATE_PER_SECOND × SEND_LEAD_TIME_MS of transactional messages (at
   * least SEND_IN_FLIGHT_MIN, at most SEND_IN_FLIGHT_MAX: one workflow each), and SEND_RATE_PER_SECOND × BULK_LEAD_TIME_MS of bulk ones (at least one batch
   * of BULK_BATCH_SIZE). The rest waits in the outbox, picked fairly between workspaces.
   */
  SEND_LEAD_TIME_MS: z.coerce.number().int().positive().default(1_500),
  SEND_IN_FLIGHT_MIN: z.coerce.number().int().positive().default(10),
  SEND_IN_FLIGHT_MAX: z.coerce.number().int().positive().default(400),
  BULK_LEAD_TIME_MS: z.coerce.number().int().positive().default(30_000),
  BULK_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(500),
  /**
   * Adaptive batching (docs/delivery.md): a workspace with at least this many transactional messages waiting
   * on a channel sends them in batch workflows (carrying their ids in MessageIds); below it, one send:<id>
   * workflow each. 0 keeps one workflow per message always.
   */
  SEND_BATCH_THRESHOLD: z.coerce.number().int().min(0).default(20),
  /** Whether this worker runs the dispatchers, of messages, of webhook deliveries and of inbound mail whose workflow did not start (at least one must; it is safe on all of them). */
  SEND_DISPATCHER: booleanString.default(true),
  /** How often an idle dispatcher looks for new messages (and webhook deliveries): the most one waits to be started. */
  SEND_DISPATCH_INTERVAL_MS: z.coerce.number().int().positive().default(100),
  /**
   * When a provider fails (docs/delivery.md): a provider route's breaker opens after this many consecutive
   * provider-level failures (refused or timed-out connections, SMTP 421, throttling, HTTP 429/5xx); while open
   * its messages wait in the outbox and the dispatcher lets one through as a probe every PROVIDER_PROBE_INTERVAL_MS.
   */
  PROVIDER_BREAKER_THRESHOLD: z.coerce.number().int().positive().default(5),
  PROVIDER_PROBE_INTERVAL_MS: z.coerce.number().int().positive().default(1_500),
  /**
   * A message that failed transiently (a greylisted recipient) waits in the outbox SEND_RETRY_INITIAL_MS,
   * doubling per failure up to SEND_RETRY_MAX_INTERVAL_MS; one not sent SEND_RETRY_DEADLINE_MS after it was
   * accepted ends failed.
   */
  SEND_RETRY_INITIAL_MS: z.coerce.number().int().positive().default(5_000),
  SEND_RETRY_MAX_INTERVAL_MS: z.coerce.number().int().positive().default(300_000),
  SEND_RETRY_DEADLINE_MS: z.coerce.number().int().positive().default(86_400_000),
  /**
   * Campaigns (docs/campaigns.md): a sending campaign keeps at most SEND_RATE_PER_SECOND × CAMPAIGN_LEAD_TIME_MS
   * of its messages unsent in the outbox (at least two bulk batches), written CAMPAIGN_PAGE_SIZE at a time.
   */
  CAMPAIGN_LEAD_TIME_MS: z.coerce.number().int().positive().default(60_000),
  CAMPAIGN_PAGE_SIZE: z.coerce.number().int().min(1).max(10_000).default(2_000),
  /**
   * A campaign pauses itself (once) when, after CAMPAIGN_AUTO_PAUSE_AFTER sends, its hard bounces or
   * complaints per send pass these fractions. CAMPAIGN_AUTO_PAUSE_AFTER=0 turns it off.
   */
  CAMPAIGN_AUTO_PAUSE_AFTER: z.coerce.number().int().min(0).default(1_000),
  CAMPAIGN_AUTO_PAUSE_BOUNCE_RATE: z.coerce.number().min(0).max(1).default(0.05),
  CAMPAIGN_AUTO_PAUSE_COMPLAINT_RATE: z.coerce.number().min(0).max(1).default(0.002),
  /** Run migrations when the API starts (on in development; production runs `npm run db:migrate`). */
  MIGRATE_ON_START: booleanString.optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  /**
   * The budget of one template render (subject, body, every block, chat texts together), on a pool of
   * TEMPLATE_RENDER_THREADS threads per process: past it the render is stopped and is a 422
   * template_invalid (a preview) or a failed message (a send). MEMORY_MB caps each thread's heap.
   */
  TEMPLATE_RENDER_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  TEMPLATE_RENDER_MEMORY_MB: z.coerce.number().int().min(16).default(64),
  TEMPLATE_RENDER_THREADS: z.coerce.number().int().positive().default(2),
  /** Renders waiting for a thread, per process; past it a preview answers 429 with Retry-After instead of queueing without end. */
  TEMPLATE_RENDER_MAX_QUEUE: z.coerce.number().int().min(1).default(32),
  /**
   * Operators' bearer token for /metrics and the per-dependency detail of /readyz. Unset: /metrics is
   * open in development and test, not served in production.
   */
  OPS_TOKEN: z.string().min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 32`)').optional(),
  /**
   * The API's statements are cancelled after this long (Postgres statement_timeout; 0 turns it off), and
   * the request answers 503: no list, filter or preview holds a connection of the pool unbounded.
   */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(15_000),
  /** How often the API writes buffered pixel and click hits (docs/tracking.md); they are also written on SIGTERM. */
  TRACKING_FLUSH_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /**
   * Express's `trust proxy`: which proxies in front of the API may name the client in X-Forwarded-For
   * (`false`, `true`, a hop count, or addresses such as `loopback, 10.0.0.0/8`). Tracking classifies hits
   * by the client's address (Apple's privacy proxy, scanner networks), so set it behind a load balancer.
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value): boolean | number | string => (value === 'true' ? true : value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value)),

  /**
   * The public edge (docs/security.md, "The public edge"): requests per client address per minute on the
   * routes without a key; an IPv6 client counts with its /64, and TRUST_PROXY decides who the client is.
   * Providers post callbacks, and mail image proxies fetch pixels, from few addresses at the pace of
   * sending, so those two are high; past a limit the answer is 429 (tracking: answered, not recorded).
   */
  TRACKING_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(3_000),
  UNSUBSCRIBE_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(60),
  CALLBACKS_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(6_000),
  DOCS_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /** Well-formed API keys that match no key, per client address per minute; past it 429 before any lookup. */
  UNKNOWN_KEYS_PER_IP_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /** The same pixel or click (token, client address, user agent) again within this window is answered, not stored again. */
  TRACKING_REPLAY_WINDOW_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Accept unsubscribe links of version 1 (signed before issue 29): they can only be checked after a
   * database read, so anyone can make each one cost a read. Set it for as long as mail sent by an older
   * version may still be read (RFC 8058 links do not expire) if this deployment sent marketing mail before.
   */
  UNSUBSCRIBE_V1_LINKS: booleanString.default(true),
  /** Twilio statuses of SIDs no message has yet, parked per workspace per hour; past it 429 (a workspace can sign its own). */
  TWILIO_PARKED_PER_WORKSPACE_PER_HOUR: z.coerce.number().int().positive().default(1_000),

  // Deployment settings every instance understands (decisions.md).
  EMAIL_PROVIDER: z.enum(['smtp', 'ses']).default('smtp'),
  SMTP_URL: z.string().min(1).default('smtp://127.0.0.1:1025'),
  /** The AWS SDK reads these itself; they are listed so that a bad value fails at start. */
  AWS_REGION: z.string().min(1).default('us-east-1'),
  AWS_ENDPOINT_URL: z.url().optional(),
  S3_BUCKET: z.string().min(3).default('messaging-local'),
  /** `host:port` list used for domain verification; empty means the system resolver. */
  DNS_SERVERS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((server) => server.trim()).filter(Boolean)),
  /**
   * The base of every Twilio REST call (account checks, WhatsApp sends): Twilio itself by default; tests and
   * self-hosters point it at a stand-in (providers/twilio/client.ts says how the client is redirected).
   */
  TWILIO_API_URL: z.url().default('https://api.twilio.com'),
  ...inboundListenerSettings,
  /**
   * Local development and tests only, refused in production: http and private, loopback and link-local
   * addresses as webhook targets; as the analytics connector's Matomo base URL; as attachment and import
   * URLs. One switch per feature, so turning one on for a local receiver opens no other door.
   */
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: booleanString.default(false),
  ANALYTICS_ALLOW_PRIVATE_TARGETS: booleanString.default(false),
  URL_FETCH_ALLOW_PRIVATE_TARGETS: booleanString.default(false),
  /**
   * The Telegram Bot API root: every Bot API call (getMe, setWebhook, sends) goes to it. Kept with a
   * trailing `/`, because telegraf resolves `bot<token>/<method>` relative to it and would otherwise drop
   * the last segment of a root with a path (a self-hosted Bot API behind `/telegram`).
   */
  TELEGRAM_API_URL: z
    .url()
    .default('https://api.telegram.org/')
    .transform((value) => (value.endsWith('/') ? value : `${value}/`)),
  /**
   * Webhook deliveries of one endpoint in flight at once (docs/webhooks.md): a slow or dead endpoint holds
   * only these, and the rest of its backlog waits in Postgres, not in Temporal.
   */
  WEBHOOK_IN_FLIGHT_PER_ENDPOINT: z.coerce.number().int().min(1).max(1_000).default(10),
  /** How often the webhook dispatcher frees the slots of deliveries whose workflow ended without freeing them. */
  WEBHOOK_SLOT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(15_000),
  /**
   * Encrypts secrets at rest (DKIM private keys, provider credentials): 32 bytes, base64 or hex. The
   * development default is public and refused in production.
   */
  MASTER_KEY: z
    .string()
    .refine(isMasterKeyText, 'must be 32 bytes, as base64 (44 characters, e.g. `openssl rand -base64 32`) or hex (64 characters)')
    .optional(),
  /**
   * Earlier master keys, comma-separated, during a rotation (README, "Rotating MASTER_KEY"): they open
   * secrets sealed under them and verify links signed with them; only MASTER_KEY seals and signs.
   */
  MASTER_KEY_PREVIOUS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((key) => key.trim()).filter(Boolean))
    .refine((keys) => keys.every(isMasterKeyText), 'each key must be 32 bytes, as base64 (44 characters) or hex (64 characters), comma-separated'),
  /**
   * SNS topics whose SES notifications are accepted. A valid SNS signature only proves the message came
   * from SNS, not from your topic, so no other topic is ever accepted, and SES needs at least one.
   */
  SNS_TOPIC_ARNS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((arn) => arn.trim()).filter(Boolean)),
  /** The host customers include in their SPF record (`include:<host>`): the platform's sending servers. */
  PLATFORM_SPF_INCLUDE: z.string().min(1).default('spf.messaging.local'),
  /** The host inbound-enabled domains point their MX record at (the SMTP listener). */
  INBOUND_MX_HOST: z.string().min(1).default('inbound.messaging.local'),

  // The send path's safety nets (issue 10).
  /** How often the reconciler looks for messages whose send workflow closed or vanished. */
  RECONCILE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /** A dispatched message still waiting this long after its last change is checked against Temporal. */
  RECONCILE_STALE_AFTER_MS: z.coerce.number().int().min(0).default(10 * 60_000),
  /** Activity slots of the `bulk` queue per worker: import slices and analytics pages running at once. */
  BULK_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(100).default(4),
  /** The worker's Prometheus endpoint (`/metrics`); loopback by default, so only the host or its scraper sees it. 0 turns it off. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** The inbound SMTP process's Prometheus endpoint (its refusals); loopback by default. 0 turns it off. */
  INBOUND_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  INBOUND_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * A workflow bundle built ahead from these sources (`npm run workflows:bundle`): the worker loads it instead of
   * running webpack at start (seconds of CPU). Unset, the worker bundles its own; tracing on, it always does
   * (the traced bundle carries the OpenTelemetry interceptors).
   */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  /** When set, SIGUSR2 makes the worker write V8 heap snapshots (main and workflow threads) here: a soak's diagnostic. */
  WORKER_HEAP_SNAPSHOT_DIR: z.string().min(1).optional(),

  // Tracing (issue 34): off unless an OTLP endpoint is set; the standard OpenTelemetry names (docs/observability.md, Traces).
  /** The OTLP/HTTP collector's base URL; traces go to `<it>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** The traces URL itself, used as given; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** service.name on every span; unset, each process names itself (`messaging-api`, `messaging-worker`). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** The standard kill switch: true keeps tracing off even with an endpoint set. */
  OTEL_SDK_DISABLED: booleanString.default(false),
}).refine((config) => config.EMAIL_PROVIDER !== 'ses' || config.SNS_TOPIC_ARNS.length > 0, {
  path: ['SNS_TOPIC_ARNS'],
  message: 'required when EMAIL_PROVIDER=ses: the SNS topic ARNs (comma-separated) of your SES notifications; no other topic is accepted',
  // Also when another variable is invalid, so one error names every problem; not when these two are.
  when: (payload) => !payload.issues.some((issue) => ['EMAIL_PROVIDER', 'SNS_TOPIC_ARNS'].includes(String(issue.path?.[0]))),
}).refine((config) => Boolean(config.INBOUND_TLS_CERT_PATH) === Boolean(config.INBOUND_TLS_KEY_PATH), {
  path: ['INBOUND_TLS_CERT_PATH'],
  message: 'INBOUND_TLS_CERT_PATH and INBOUND_TLS_KEY_PATH go together: set both (STARTTLS) or neither',
  when: (payload) => !payload.issues.some((issue) => ['INBOUND_TLS_CERT_PATH', 'INBOUND_TLS_KEY_PATH'].includes(String(issue.path?.[0]))),
}).refine((config) => Math.max(config.RATE_COST_SEARCH, config.RATE_COST_HEAVY) <= config.WORKSPACE_RATE_LIMIT_PER_SECOND, {
  path: ['WORKSPACE_RATE_LIMIT_PER_SECOND'],
  message: 'must be at least RATE_COST_SEARCH and RATE_COST_HEAVY, or those routes could never be called',
  when: (payload) => !payload.issues.some((issue) => ['WORKSPACE_RATE_LIMIT_PER_SECOND', 'RATE_COST_SEARCH', 'RATE_COST_HEAVY'].includes(String(issue.path?.[0]))),
});

export type Config = Omit<z.infer<typeof configSchema>, 'MIGRATE_ON_START' | 'MASTER_KEY'> & {
  MIGRATE_ON_START: boolean;
  MASTER_KEY: string;
};

/** What production refuses even when well-formed: the problems, one line each. */
function productionProblems(config: z.infer<typeof configSchema>): string[] {
  const problems: string[] = [];
  if (!config.MASTER_KEY) problems.push('MASTER_KEY: required in production; generate one with `openssl rand -base64 32`');
  // The development key and every other key committed to this repository are public (core/published-master-keys.ts).
  else if (isPublishedMasterKey(parseMasterKey(config.MASTER_KEY))) {
    const which = parseMasterKey(config.MASTER_KEY).equals(parseMasterKey(DEVELOPMENT_MASTER_KEY)) ? 'the public development key' : 'a key published in this repository';
    problems.push(`MASTER_KEY: ${which} is refused in production; generate one with \`openssl rand -base64 32\``);
  }
  for (const name of ['WEBHOOKS_ALLOW_PRIVATE_TARGETS', 'ANALYTICS_ALLOW_PRIVATE_TARGETS', 'URL_FETCH_ALLOW_PRIVATE_TARGETS'] as const) {
    if (config[name]) problems.push(`${name}: refused in production (it lets tenants' URLs reach private and loopback addresses); for local development and tests only`);
  }
  return problems;
}

/** Where spans go, or null when tracing is off (no endpoint, or OTEL_SDK_DISABLED): the one switch every process reads. */
export function tracesEndpoint(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SDK_DISABLED'>): string | null {
  if (config.OTEL_SDK_DISABLED) return null;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return config.OTEL_EXPORTER_OTLP_ENDPOINT ? `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : null;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings mean "not set", as in a docker-compose file with `VAR=`.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const config = parsed.data;
  const production = config.NODE_ENV === 'production';
  const problems = production ? productionProblems(config) : [];
  if (problems.length) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return {
    ...config,
    MIGRATE_ON_START: config.MIGRATE_ON_START ?? !production,
    MASTER_KEY: config.MASTER_KEY ?? DEVELOPMENT_MASTER_KEY,
  };
}

/**
 * The deployment's keyring: MASTER_KEY seals and signs, MASTER_KEY_PREVIOUS only open and verify. A
 * published previous key (the old docker-compose sample, say) still opens secrets so they can be re-sealed,
 * but verifies no link: anyone could have made one under it.
 */
export function configKeyring(config: Pick<Config, 'MASTER_KEY' | 'MASTER_KEY_PREVIOUS'>): Keyring {
  const key = (text: string) => {
    const bytes = parseMasterKey(text);
    return masterKey(bytes, isPublishedMasterKey(bytes));
  };
  return keyringOf(key(config.MASTER_KEY), ...config.MASTER_KEY_PREVIOUS.map(key));
}
