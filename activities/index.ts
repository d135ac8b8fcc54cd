import { type Logger, pino } from 'pino';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Sequelize } from 'sequelize';
import { domainOf } from '../core/addresses';
import { type Config, configKeyring } from '../core/config';
import { sendRetrySettings } from '../core/breaker';
import { emailContentOf } from '../core/message-content';
import { unsubscribeUrl } from '../core/list-unsubscribe';
import { macKeys } from '../core/secrets';
import { unsubscribeTokens } from '../core/unsubscribe-token';
import { trackingKey } from '../core/tracking/tokens';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../db/blob-store';
import { findSendingRegion } from '../db/repositories/domains';
import { replayParkedEvents } from '../db/repositories/provider-events';
import { createAttachmentSources } from '../services/attachment-sources';
import { createAttachmentFiles } from '../db/attachment-files';
import { botApi } from '../providers/telegram/bot-api';
import { findAttachments } from '../db/repositories/attachments';
import type { PublicFetchOptions } from '../infra/public-fetch';
import { createTemplateRenderer, type TemplateRenderer, templateRendererOptions } from '../infra/template-renderer';
import { createAnalyticsSyncActivities } from './analytics-sync';
import { createAutomationEnrollActivities } from './automation-enroll';
import { campaignFeedSettings, type CampaignFeedSettings, createCampaignActivities } from './campaigns';
import type { EmailChannel } from '../providers/email-channel';
import { createSesChannel } from '../providers/ses/send';
import { createSesClients, type SesClients } from '../providers/ses/clients';
import { createSmtpChannel } from '../providers/smtp/send';
import { createDkimSigner } from './dkim';
import { createDomainActivities, domainActivityDeps } from './domains';
import { createJourneySweeperActivities } from './journey-sweeper';
import { bulkChunkSize, createDeliveryActivities, type DeliveryTiming } from './delivery';
import { createEmailDelivery, type EmailDeliveryDeps } from './email-delivery';
import { createEmailRenderer } from './email-render';
import { createPacing, emailPaceLimits, type PacingDeps } from './pacing';
import { createChatRenderer } from './chat-render';
import { createTelegramChannel } from '../providers/telegram/send';
import { createWhatsAppChannel } from '../providers/twilio/whatsapp';
import { createTelegramDelivery } from './telegram-delivery';
import { createWhatsAppDelivery, whatsAppAccounts } from './whatsapp-delivery';
import { createReconcilerActivities } from './reconciler';
import { createSendObserver } from './send-observer';
import { createProviderBreaker } from './provider-breaker';
import { createProviderEventActivities, emailSuppress } from './provider-events';
import { createUsageActivities } from './usage';
import { createWebhookActivities } from './webhooks';
import { createJourneyActivities } from './journeys';
import type { TemporalPorts } from './ports';
import { createInboundMailActivities } from './inbox-mail';
import { createImportActivities, type ImportSettings } from './imports';
import { returnPathTokens } from '../core/bounces/return-path';
import { createBounceMailActivities } from './bounce-mail';
import { returnPathDomains } from './return-path-domains';

export interface ActivityDeps {
  db: Sequelize;
  config: Config;
  /** The email provider; built from EMAIL_PROVIDER when not given. */
  emailChannel?: EmailChannel;
  /** The process's SES clients (one per region), shared with `emailChannel`; made here when not given. */
  sesClients?: SesClients;
  blobs?: BlobStore;
  /**
   * What activities ask of Temporal (journey starts and signals, campaign restarts, the reconciler's questions):
   * ports, implemented by temporal/activity-ports.ts and wired by whoever builds the activities (workers/main.ts).
   */
  temporal: TemporalPorts;
  logger?: Logger;
  /** Where the send path's counters register (the worker's /metrics). */
  metrics?: Registry;
  /** Replaces parts of the email channel's dependencies: tests slow or break one step. */
  email?: Partial<Pick<EmailDeliveryDeps, 'loadAttachments' | 'sign'>>;
  timing?: Partial<DeliveryTiming>;
  /** For pacing provider calls (shared by all workers); a connection to REDIS_URL, made on first use, when not given. */
  redis?: Redis;
  /** A shorter probe and share refresh of the pacer's fallback while Redis is away (tests). */
  pacerFallback?: PacingDeps['fallback'];
  /** Where templates render; built from the config when not given (its threads start on first use). */
  templateRenderer?: TemplateRenderer;
  /** Options of the webhook calls' SSRF-safe fetcher (tests point its resolver at a stand-in). */
  webhookFetch?: Partial<PublicFetchOptions>;
  /** Options of the Matomo calls' SSRF-safe fetcher (tests point it at a stand-in). */
  analyticsFetch?: Partial<PublicFetchOptions>;
  /** Shortens the campaign feed's slice and poll (tests). */
  campaignTiming?: Partial<Pick<CampaignFeedSettings, 'sliceMs' | 'pollMs'>>;
  /** Options of the import URL fetcher (tests point it at a stand-in of a public server). */
  importFetch?: Partial<PublicFetchOptions>;
  /** Smaller import batches and slices (tests). */
  importSettings?: Partial<ImportSettings>;
}

export function emailChannelFromConfig(config: Config, db: Sequelize, sesClients: SesClients): EmailChannel {
  if (config.EMAIL_PROVIDER === 'smtp') return createSmtpChannel(config.SMTP_URL, returnPathTokens(macKeys(configKeyring(config))));
  return createSesChannel({
    clients: sesClients,
    // A domain's identity lives in its own region; a message whose domain is gone tries the default one.
    sendingRegion: async (email) => (await findSendingRegion(db, email.messageId, domainOf(email.from.address))) ?? config.AWS_REGION,
  });
}

/** Every activity, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const logger = deps.logger ?? pino({ level: config.LOG_LEVEL });
  const pacing = createPacing({ config, redis: deps.redis, db, logger, metrics: deps.metrics, fallback: deps.pacerFallback });
  const observer = createSendObserver(logger, deps.metrics);
  const blobs = deps.blobs ?? createBlobStore(blobStoreOptions(config));
  const sources = createAttachmentSources({ db, blobs });
  const files = createAttachmentFiles({ db, blobs });
  const templateRenderer = deps.templateRenderer ?? createTemplateRenderer(templateRendererOptions(config));
  // One SES client per region for the process, shared by sending and domain registration; made on first use.
  const sesClients = deps.sesClients ?? createSesClients();
  const keyring = configKeyring(config);
  const unsubscribe = unsubscribeTokens(macKeys(keyring));
  const suppress = emailSuppress(db);
  return {
    ...createUsageActivities(db),
    ...createWebhookActivities({
      db,
      keyring,
      fetch: { allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS, ...deps.webhookFetch },
    }),
    ...createDomainActivities(domainActivityDeps(db, config, sesClients)),
    ...createAnalyticsSyncActivities({
      db,
      keyring,
      blobs,
      fetch: { allowPrivateTargets: config.ANALYTICS_ALLOW_PRIVATE_TARGETS, ...deps.analyticsFetch },
    }),
    ...createProviderEventActivities(db),
    ...createCampaignActivities({ db, settings: campaignFeedSettings(config, deps.campaignTiming) }),
    ...createJourneyActivities({ db }),
    ...createImportActivities({ db, blobs, fetch: { allowPrivateTargets: config.URL_FETCH_ALLOW_PRIVATE_TARGETS, ...deps.importFetch }, settings: deps.importSettings }),
    ...createBounceMailActivities({ db, blobs, suppress, tokens: returnPathTokens(macKeys(keyring)), maxMessageBytes: config.INBOUND_MAX_MESSAGE_BYTES }),
    ...createInboundMailActivities({
      db,
      blobs,
      journeys: deps.temporal.journeys,
      maxMessageBytes: config.INBOUND_MAX_MESSAGE_BYTES,
      logger: deps.logger,
    }),
    ...createReconcilerActivities({ db, workflows: deps.temporal.workflows, campaigns: deps.temporal.campaigns, observer }),
    ...createAutomationEnrollActivities({ db, journeys: deps.temporal.journeys, logger: deps.logger }),
    ...createJourneySweeperActivities({ db, journeys: deps.temporal.journeys, logger: deps.logger }),
    ...createDeliveryActivities({
      db,
      observer,
      pace: pacing.pace,
      bulkChunk: bulkChunkSize(config.SEND_RATE_PER_SECOND),
      replayParkedEvents: (provider, providerMessageId) => replayParkedEvents(db, suppress, provider, providerMessageId),
      breaker: createProviderBreaker({ db, observer, threshold: config.PROVIDER_BREAKER_THRESHOLD }),
      retry: sendRetrySettings(config),
      timing: deps.timing,
      // One delivery per channel, picked by each message's channel.
      channels: {
        email: createEmailDelivery({
          db,
          observer,
          channel: deps.emailChannel ?? emailChannelFromConfig(config, db, sesClients),
          limits: emailPaceLimits(config),
          suppress,
          // SES reports bounces itself (SNS); SMTP mail collects them on VERP return paths at our MX.
          ...(config.EMAIL_PROVIDER === 'smtp' && { returnPathDomain: returnPathDomains(db) }),
          render: createEmailRenderer(
            db,
            templateRenderer,
            { baseUrl: config.PUBLIC_BASE_URL, key: trackingKey(keyring.current.key) },
            (claims) => unsubscribeUrl(config.PUBLIC_BASE_URL, unsubscribe.sign(claims)),
          ),
          sign: createDkimSigner(db, keyring),
          unsubscribeUrl: (claims) => unsubscribeUrl(config.PUBLIC_BASE_URL, unsubscribe.sign(claims)),
          // An attachment deleted after the send was accepted is left out, not a failure (the spec's state table).
          loadAttachments: async (message) => {
            const refs = emailContentOf(message.content).attachments;
            if (refs.length === 0) return { attachments: [], missing: [] };
            const { attachments, missing } = await sources.load(message.workspaceId, refs);
            return { attachments: attachments.map(({ filename, contentType, content, contentId }) => ({ filename, contentType, content, contentId })), missing };
          },
          ...deps.email,
        }),
        whatsapp: createWhatsAppDelivery({
          db,
          observer,
          channel: createWhatsAppChannel({ accounts: whatsAppAccounts(db), keyring, apiUrl: config.TWILIO_API_URL, publicBaseUrl: config.PUBLIC_BASE_URL }),
          render: createChatRenderer(db, templateRenderer, 'whatsapp'),
          ratePerSecond: config.WHATSAPP_RATE_PER_SECOND,
          // Twilio fetches media itself: signed download URLs of the stored files (valid 15 minutes).
          mediaUrls: async (workspaceId, refs) => {
            if (refs.length === 0) return [];
            const found = await findAttachments(db, workspaceId, refs.map((ref) => ref.id));
            return Promise.all(found.filter((attachment) => attachment.status === 'ready').map((attachment) => files.downloadUrl(attachment)));
          },
        }),
        telegram: createTelegramDelivery({
          db,
          observer,
          channel: createTelegramChannel({ keyring, botApi: (token) => botApi(config.TELEGRAM_API_URL, token) }),
          render: createChatRenderer(db, templateRenderer, 'telegram'),
          pace: pacing.pace,
          loadAttachments: async (workspaceId, refs) => {
            if (refs.length === 0) return { attachments: [], missing: [] };
            const { attachments, missing } = await sources.load(workspaceId, refs);
            return { attachments: attachments.map(({ filename, contentType, content }) => ({ filename, contentType, content })), missing };
          },
        }),
      },
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
