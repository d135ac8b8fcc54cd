import type { Registry } from 'prom-client';
import type { Agent as HttpsAgent } from 'node:https';
import type { Client, Connection } from '@temporalio/client';
import express, { type Express, type RequestHandler, Router } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import swaggerUi from 'swagger-ui-express';
import { type Config, configKeyring } from '../core/config';
import { confirmationTokens } from '../core/confirmation-token';
import { UNSUBSCRIBE_PATH } from '../core/list-unsubscribe';
import { macKeys } from '../core/secrets';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../db/blob-store';
import { suppressAddresses } from '../db/repositories/suppressions';
import { createEmailAcceptance } from '../services/acceptance/email-acceptance';
import type { SendChecks } from '../services/acceptance/email-draft';
import { createSendChecks, verifiedDomainCache } from '../services/acceptance/send-checks';
import { outboxWakePublisher } from '../db/outbox-wake';
import { type AttachmentSources, createAttachmentSources } from '../services/attachment-sources';
import type { PublicFetchOptions } from '../infra/public-fetch';
import { botApi } from '../providers/telegram/bot-api';
import type { TemplateRenderer } from '../infra/template-renderer';
import { activeTracing } from '../infra/tracing';
import { createTemporalClient } from '../temporal/connection';
import { journeyControl } from '../temporal/journeys';
import { callbackRoutes } from './callbacks/routes';
import { twilioCallbackRoutes } from './callbacks/twilio';
import { telegramCallbackRoutes } from './callbacks/telegram';
import { automationRoutes } from './automations/routes';
import { createEnrollmentService } from './automations/enrollment';
import { createAutomationLinks } from './automations/links';
import { createAutomationStats } from './automations/stats';
import { createAutomationSimulation } from './automations/simulation';
import { createAutomationService } from './automations/service';
import { campaignRoutes } from './campaigns/routes';
import { commerceRoutes } from './commerce/routes';
import { createRevenueReports } from './commerce/reports';
import { createCampaignLift } from './commerce/lift';
import { liftRoutes } from './commerce/lift-routes';
import { createCommerceService } from './commerce/service';
import { createCampaignSending } from './campaigns/sending';
import { createCampaignService, type CampaignServiceDeps } from './campaigns/service';
import { emailRoutes } from './emails/routes';
import { importRoutes } from './imports/routes';
import { createImportService } from './imports/service';
import { emailRuleRoutes } from './email-rules/routes';
import { createEmailRuleService } from './email-rules/service';
import { createInboxAttachmentDownloads } from './inboxes/attachment-downloads';
import { inboxRoutes } from './inboxes/routes';
import { createInboxSending } from './inboxes/sending';
import { createInboxService } from './inboxes/service';
import { eventRoutes } from './events/routes';
import { createEventService } from './events/service';
import { messageRoutes } from './messages/routes';
import { createMessageService } from './messages/service';
import { apiKeyRoutes } from './api-keys/routes';
import { createApiKeyService } from './api-keys/service';
import { attachmentRoutes } from './attachments/routes';
import { createAttachmentService } from './attachments/service';
import { contactRoutes } from './contacts/routes';
import { conversionRoutes } from './conversions/routes';
import { createConversionService } from './conversions/service';
import { telegramLink } from './contacts/telegram-link';
import { telegramLinkTokens } from '../core/telegram-link-token';
import { createContactService } from './contacts/service';
import { automationSettingsRoutes } from './automation-settings/routes';
import { createAutomationSettingsService } from './automation-settings/service';
import { customFieldRoutes } from './custom-fields/routes';
import { createCustomFieldService } from './custom-fields/service';
import { domainRoutes } from './domains/routes';
import { domainServiceFromConfig } from './domains/service';
import { healthRoutes } from './health/routes';
import { analyticsIntegrationRoutes } from './integrations/analytics/routes';
import { createAnalyticsIntegrationService } from './integrations/analytics/service';
import { twilioIntegrationRoutes } from './integrations/twilio/routes';
import { createTwilioIntegrationService } from './integrations/twilio/service';
import { telegramIntegrationRoutes } from './integrations/telegram/routes';
import { createTelegramIntegrationService } from './integrations/telegram/service';
import { AllowedMethods } from './http/allowed-methods';
import { authenticate } from './http/auth';
import { clientLimits } from './http/client-limits';
import type { KeyCache } from './http/key-cache';
import { notFoundRoute, renderErrors } from './http/errors';
import { createHttpMetrics } from './http/metrics';
import { requestLogger } from './http/request-log';
import { requestSpans } from './http/request-span';
import { createOpsAccess } from './http/ops-access';
import { createOpenApiRegistry, generateOpenApiDocument } from './http/openapi';
import { heavySlots } from './http/heavy-slots';
import { keyLimit, rateLimitPerKey, rateLimitPerWorkspace, unroutedLimitHeaders } from './http/rate-limit';
import { RouteTable } from './http/route';
import { listRoutes } from './lists/routes';
import { createListService } from './lists/service';
import { createSegmentService } from './segments/service';
import { segmentRoutes } from './segments/routes';
import { createSuppressionService } from './suppressions/service';
import { suppressionRoutes } from './suppressions/routes';
import { createTagService } from './tags/service';
import { tagRoutes } from './tags/routes';
import { templateRoutes } from './templates/routes';
import type { Tracking } from './tracking/tracking';
import { createTemplateService } from './templates/service';
import { unsubscribeRoutes } from './unsubscribe/routes';
import { usageRoutes } from './usage/routes';
import { webhookRoutes } from './webhooks/routes';
import { createWebhookService } from './webhooks/service';

export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Sequelize;
  /** The small pool of audience queries (db/audience-session.ts); whoever creates the app closes it. */
  audienceDb: Sequelize;
  redis: Redis;
  temporal: Connection;
  keyCache: KeyCache;
  /** Template previews render on its threads; whoever creates the app closes it. */
  templateRenderer: TemplateRenderer;
  /** The S3-compatible store (attachments); built from the config when not given. */
  blobs?: BlobStore;
  /** Options of the attachment URL fetcher (tests point it at a local stand-in of a public server). */
  attachmentFetch?: Partial<PublicFetchOptions>;
  /** Options of the webhook URL check (tests point its resolver at a stand-in). */
  webhookFetch?: Partial<PublicFetchOptions>;
  /** Options of the Matomo calls' SSRF-safe fetcher (tests point it at a stand-in). */
  analyticsFetch?: Partial<PublicFetchOptions>;
  /** How long POST /integrations/analytics/sync waits for its sync before answering 202 (6 s unless set: under common proxies' timeouts). */
  analyticsSyncWaitMs?: number;
  /** For SNS certificate downloads and subscription confirmations (tests route it to a local server). */
  snsAgent?: HttpsAgent;
  /** The public pixel and click redirects with their hit buffer; whoever creates the app closes it (api/tracking/tracking.ts). */
  tracking: Tracking;
  /** Node's process metrics, collected once by the process (api/main.ts) and served at /metrics; tests' apps go without. */
  processMetrics?: Registry;
  /** Mounts extra keyed routes before the 404 handler (benchmarks measure the edge with it). */
  extend?: (api: Router, edge: RequestHandler[]) => void;
}

/** What the route groups below are wired from: the app's dependencies and what createApp built once for all. */
interface Wiring {
  deps: AppDeps;
  keyring: ReturnType<typeof configKeyring>;
  /** A route table for one OpenAPI tag, behind the key, rate limit and workspace budget. */
  table: (tag: string) => RouteTable;
  temporal: Client;
  blobs: BlobStore;
}

export function createApp(deps: AppDeps): Express {
  const { config, redis } = deps;
  // Parsed once: the integrations, their callbacks and the campaign tokens all seal or sign with it.
  const keyring = configKeyring(config);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  // Only when this process started tracing (infra/tracing.ts): otherwise no middleware at all.
  if (activeTracing()) app.use(requestSpans());
  app.use(requestLogger(deps.logger));
  const metrics = createHttpMetrics(deps.processMetrics);
  app.use(metrics.observe);
  // Per client address, before any route without a key reads anything (tracking counts its own hits).
  const perClient = clientLimits(redis, config);
  mountPublicRoutes(app, deps, keyring, perClient, metrics);

  const api = Router();
  const authenticated = authenticate(deps.keyCache, perClient.unknownKeys);
  const countKey = keyLimit(redis, config.RATE_LIMIT_PER_SECOND);
  const edge = [authenticated, rateLimitPerKey(countKey)];
  const unroutedLimits = unroutedLimitHeaders(authenticated, countKey);
  const registry = createOpenApiRegistry();
  const allowed = new AllowedMethods();
  // Before every route: a method a path lacks is a 405 of that path, not a 404 of an overlapping `/:id` route.
  api.use(allowed.guard(unroutedLimits));
  // Not strict: a body that is valid JSON of the wrong type ("AAA", 42, null) reaches the route's schema and
  // answers 422 there, rather than 400 invalid_json, which stays for text that is not JSON at all.
  const parseBody = {
    default: express.json({ limit: config.MAX_BODY_BYTES, strict: false }),
    large: express.json({ limit: config.MAX_SEND_BODY_BYTES, strict: false }),
  };
  const budget = {
    spend: rateLimitPerWorkspace(redis, config.WORKSPACE_RATE_LIMIT_PER_SECOND, { search: config.RATE_COST_SEARCH, heavy: config.RATE_COST_HEAVY }),
    heavySlot: heavySlots(redis, { perWorkspace: config.WORKSPACE_HEAVY_CONCURRENCY, leaseMs: config.HEAVY_LEASE_MS, logger: deps.logger }),
  };
  const blobs = deps.blobs ?? createBlobStore(blobStoreOptions(config));
  // Development and tests create the bucket at start (a no-op in production); if the store is not up yet, first use retries.
  blobs.ensureBucket().catch((err: unknown) => deps.logger.warn({ err }, 'blob store not ready; attachments will retry'));
  const wiring: Wiring = {
    deps,
    keyring,
    table: (tag) => new RouteTable({ router: api, registry, edge, parseBody, allowed, budget }, tag),
    temporal: createTemporalClient(deps.temporal, config),
    blobs,
  };
  mountWorkspaceRoutes(wiring);
  const sending = mountSendingRoutes(wiring);
  mountOrchestrationRoutes(wiring, sending);
  deps.extend?.(api, edge);

  // Generating the document walks every route's schemas (about a second of CPU): done on the first request for it,
  // once, rather than for every app built (each test file builds one or more and rarely asks for it).
  let generated: { document: object; page: RequestHandler } | undefined;
  const reference = () => {
    if (!generated) {
      const document = generateOpenApiDocument(registry, `${config.PUBLIC_BASE_URL}`);
      generated = { document, page: swaggerUi.setup(document, { customSiteTitle: 'Messaging API reference' }) };
    }
    return generated;
  };
  api.use(['/openapi.json', '/docs'], perClient.docs.middleware);
  api.get('/openapi.json', (_req, res) => {
    res.json(reference().document);
  });
  const docsPage: RequestHandler = (req, res, next) => reference().page(req, res, next);
  api.use('/docs', swaggerUi.serve, docsPage);
  // An unknown path's 404 carries the rate-limit headers too (app.use(notFoundRoute) answers it).
  api.use(async (req, res, next) => {
    await unroutedLimits(req, res);
    next();
  });

  app.use('/api/v1', api);
  app.use(notFoundRoute);
  app.use(renderErrors);
  return app;
}

/** Routes without an API key: health, providers' callbacks, unsubscribe, tracking and the metrics scrape. */
function mountPublicRoutes(
  app: Express,
  deps: AppDeps,
  keyring: ReturnType<typeof configKeyring>,
  perClient: ReturnType<typeof clientLimits>,
  metrics: ReturnType<typeof createHttpMetrics>,
): void {
  const { config, db, redis } = deps;
  const ops = createOpsAccess(config.OPS_TOKEN, config.NODE_ENV === 'production');
  app.use('/callbacks', perClient.callbacks.middleware);
  app.use(UNSUBSCRIBE_PATH, perClient.unsubscribe.middleware);
  healthRoutes(app, { db, redis, temporal: deps.temporal, isOperator: ops.isOperator });
  callbackRoutes(app, {
    db,
    logger: deps.logger,
    topicArns: config.SNS_TOPIC_ARNS,
    httpsAgent: deps.snsAgent,
    suppress: (workspaceId, addresses, reason, transaction) =>
      suppressAddresses(db, workspaceId, 'email', addresses, reason, transaction).then(() => undefined),
  });
  twilioCallbackRoutes(app, { db, keyring, publicBaseUrl: config.PUBLIC_BASE_URL, redis, parkedPerHour: config.TWILIO_PARKED_PER_WORKSPACE_PER_HOUR });
  telegramCallbackRoutes(app, { db, keyring });
  unsubscribeRoutes(app, { db, keyring, acceptV1Links: config.UNSUBSCRIBE_V1_LINKS });
  app.use(deps.tracking.router);
  if (ops.metrics !== 'off') {
    const guard = ops.metrics === 'token' ? [ops.requireOperator] : [];
    app.get('/metrics', ...guard, async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
}

/** The workspace's own resources: keys, usage, contacts and audiences, domains, templates, attachments, webhooks, integrations. */
function mountWorkspaceRoutes({ deps, keyring, table, temporal, blobs }: Wiring): void {
  const { config, db, redis, audienceDb } = deps;
  const keys = createApiKeyService({ db, redis, evictLocally: (hash) => deps.keyCache.evict(hash), maxKeys: config.MAX_API_KEYS_PER_WORKSPACE });
  apiKeyRoutes(table('API keys'), keys);
  usageRoutes(table('Usage'), db, config.INBOUND_STORAGE_QUOTA_BYTES);
  const linkTokens = telegramLinkTokens(macKeys(keyring));
  contactRoutes(table('Contacts'), createContactService(db, audienceDb), (workspaceId, contactId) => telegramLink(db, linkTokens, workspaceId, contactId));
  tagRoutes(table('Tags'), createTagService(db));
  listRoutes(table('Lists'), createListService(db));
  customFieldRoutes(table('Custom fields'), createCustomFieldService(db));
  segmentRoutes(table('Segments'), createSegmentService(db, audienceDb));
  automationSettingsRoutes(table('Automations'), createAutomationSettingsService(db));
  suppressionRoutes(table('Suppressions'), createSuppressionService(db));
  domainRoutes(table('Domains'), domainServiceFromConfig({ db, config, temporal, logger: deps.logger }));
  templateRoutes(table('Templates'), createTemplateService({ db, templateRenderer: deps.templateRenderer }));
  attachmentRoutes(table('Attachments'), createAttachmentService({ db, blobs }));
  webhookRoutes(table('Webhooks'), createWebhookService({ db, keyring, fetch: { allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS, ...deps.webhookFetch } }));
  twilioIntegrationRoutes(table('Integrations'), createTwilioIntegrationService({ db, keyring, apiUrl: config.TWILIO_API_URL }));
  telegramIntegrationRoutes(
    table('Integrations'),
    createTelegramIntegrationService({ db, keyring, publicBaseUrl: config.PUBLIC_BASE_URL, botApi: (token) => botApi(config.TELEGRAM_API_URL, token) }),
  );
}

/** What sends share with the routes that feed campaigns and journeys: attachment sources and the send checks. */
interface Sending {
  sources: AttachmentSources;
  checks: SendChecks;
  urlFetch: Partial<PublicFetchOptions>;
}

/** Transactional sends (every one through services/acceptance/): emails, messages, inboxes, and the inbox rules. */
function mountSendingRoutes({ deps, table, blobs }: Wiring): Sending {
  const { config, db } = deps;
  const urlFetch = { allowPrivateTargets: config.URL_FETCH_ALLOW_PRIVATE_TARGETS, ...deps.attachmentFetch };
  const sources = createAttachmentSources({ db, blobs, fetch: urlFetch });
  const checks = createSendChecks({ db, sources, verifiedDomain: verifiedDomainCache(db, config.DOMAIN_CACHE_TTL_MS) });
  const wake = outboxWakePublisher(deps.redis, config.TASK_QUEUE_PREFIX);
  const emailSends = createEmailAcceptance({ db, checks, wake });
  emailRoutes(table('Emails'), emailSends, db);
  messageRoutes(table('Messages'), createMessageService({ db, checks, emails: emailSends, wake }));
  const inboxes = createInboxService(db);
  inboxRoutes(table('Inboxes'), {
    inboxes,
    sending: createInboxSending({ db, checks, inboxes, wake }),
    downloads: createInboxAttachmentDownloads({ db, blobs, inboxes }),
  });
  emailRuleRoutes(table('Email rules'), createEmailRuleService(db));
  return { sources, checks, urlFetch };
}

/** What starts workflows: imports, campaigns, automations and events; with the reports of what they earned. */
function mountOrchestrationRoutes({ deps, keyring, table, temporal, blobs }: Wiring, { sources, checks, urlFetch }: Sending): void {
  const { config, db, audienceDb, logger } = deps;
  const taskQueuePrefix = config.TASK_QUEUE_PREFIX;
  importRoutes(
    table('Imports'),
    createImportService({ db, blobs, temporal, taskQueuePrefix, logger, fetch: urlFetch, runningPerWorkspace: config.WORKSPACE_RUNNING_IMPORTS }),
  );
  const campaignDeps: CampaignServiceDeps = {
    db,
    audienceDb,
    temporal,
    taskQueuePrefix,
    tokens: confirmationTokens(macKeys(keyring)),
    sources,
    verifiedDomain: checks.verifiedDomain,
    logger,
  };
  const campaigns = createCampaignService(campaignDeps);
  campaignRoutes(table('Campaigns'), campaigns, createCampaignSending(campaignDeps, campaigns));
  automationRoutes(table('Automations'), {
    automations: createAutomationService({ db, verifiedDomain: checks.verifiedDomain }),
    enrollments: createEnrollmentService({ db, temporal, taskQueuePrefix, logger }),
    simulation: createAutomationSimulation({ db, audienceDb, templateRenderer: deps.templateRenderer }),
    links: createAutomationLinks(db),
    stats: createAutomationStats(db),
  });
  // A request hands an event to Temporal for at most this long; what is left, the journey sweeper finishes.
  const journeys = journeyControl(temporal, taskQueuePrefix);
  eventRoutes(table('Events'), createEventService({ db, journeys, logger, temporalTimeoutMs: 3_000 }));
  conversionRoutes(table('Conversions'), createConversionService(db));
  commerceRoutes(table('Commerce'), createCommerceService(db), createRevenueReports(db));
  liftRoutes(table('Commerce'), createCampaignLift(db));
  analyticsIntegrationRoutes(
    table('Integrations'),
    createAnalyticsIntegrationService({
      db,
      keyring,
      temporal,
      taskQueuePrefix,
      fetch: { allowPrivateTargets: config.ANALYTICS_ALLOW_PRIVATE_TARGETS, ...deps.analyticsFetch },
      syncWaitMs: deps.analyticsSyncWaitMs ?? 6_000,
    }),
  );
}
