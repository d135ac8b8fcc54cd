import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Sequelize } from 'sequelize';
import { ConnectorError } from '../../../core/analytics/connector';
import { type AnalyticsSource, analyticsSyncIdOf, analyticsSyncWorkflowId, parseAnalyticsSyncId, SYNC_FAILURE_TYPES } from '../../../core/analytics/sync';
import { AppError } from '../../../core/errors';
import { type Keyring, sealSecret } from '../../../core/secrets';
import {
  type AnalyticsConnectionRecord,
  deleteAnalyticsConnection,
  findAnalyticsConnection,
  saveAnalyticsConnection,
} from '../../../db/repositories/analytics-connections';
import { findAttachment } from '../../../db/repositories/attachments';
import { checkMatomoSite } from '../../../providers/matomo/connector';
import { checkPublicUrl, exchangePublic, PublicFetchError, type PublicFetchOptions } from '../../../infra/public-fetch';
import { analyticsSyncProgress, analyticsSyncState, startAnalyticsSync } from '../../../temporal/analytics';

export interface AnalyticsIntegrationDeps {
  db: Sequelize;
  keyring: Keyring;
  temporal: Client;
  taskQueuePrefix: string;
  /** The SSRF-safe fetcher's options for the Matomo base URL (ANALYTICS_ALLOW_PRIVATE_TARGETS allows local ones). */
  fetch: Partial<PublicFetchOptions>;
  /** How long POST /integrations/analytics/sync waits for the sync before answering 202 with the count so far. */
  syncWaitMs: number;
}

export interface SaveAnalyticsConnectionInput {
  provider: 'matomo';
  baseUrl: string;
  siteId: number;
  tokenAuth: string;
  currency?: string;
  goalNames?: Record<string, string>;
}

export interface SyncInput {
  attachmentId?: string;
  from?: string;
  until?: string;
}

const fieldError = (field: string, message: string) => AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });

/** A failed sync as the API's answer: the product's refusal or outage is a 502, bad rows a 422. */
function syncFailureAnswer(failure: ApplicationFailure, source: AnalyticsSource): AppError | null {
  switch (failure.type) {
    case SYNC_FAILURE_TYPES.refused:
    case SYNC_FAILURE_TYPES.unavailable:
      return new AppError('upstream_error', failure.message);
    case SYNC_FAILURE_TYPES.invalid:
      return source.kind === 'csv' ? fieldError('attachmentId', failure.message) : new AppError('upstream_error', failure.message);
    case SYNC_FAILURE_TYPES.not_configured:
      return new AppError('conflict', failure.message);
    default:
      return null;
  }
}

export function createAnalyticsIntegrationService(deps: AnalyticsIntegrationDeps) {
  const { db } = deps;

  return {
    get: (workspaceId: string) => findAnalyticsConnection(db, workspaceId),

    /**
     * Checks the base URL (https and public, unless private targets are allowed) and the token with Matomo
     * (it must open the site), then stores the connection with the token sealed. Nothing is stored when
     * Matomo says no.
     */
    async save(workspaceId: string, input: SaveAnalyticsConnectionInput): Promise<AnalyticsConnectionRecord> {
      try {
        await checkPublicUrl(input.baseUrl, deps.fetch);
      } catch (error) {
        if (error instanceof PublicFetchError) throw fieldError('baseUrl', error.message);
        throw error;
      }
      let site: { currency: string | null };
      try {
        site = await checkMatomoSite(input, (url, request, limits) => exchangePublic(url, request, { ...limits, ...deps.fetch }));
      } catch (error) {
        if (!(error instanceof ConnectorError)) throw error;
        if (error.kind === 'refused') throw fieldError('tokenAuth', error.message);
        throw new AppError('upstream_error', error.message);
      }
      return saveAnalyticsConnection(db, workspaceId, {
        provider: input.provider,
        baseUrl: input.baseUrl,
        siteId: input.siteId,
        tokenSealed: sealSecret(deps.keyring, { workspaceId, column: 'analytics_connections.token' }, input.tokenAuth),
        currency: input.currency?.toUpperCase() ?? site.currency,
        goalNames: input.goalNames ?? {},
      });
    },

    async remove(workspaceId: string): Promise<void> {
      if (!(await deleteAnalyticsConnection(db, workspaceId))) throw AppError.notFound('Analytics connection');
    },

    /**
     * Starts (or joins) the sync and waits for it up to `syncWaitMs`: its result, or, while it still runs,
     * how many conversions it has recorded so far (`done: false`, answered 202) and the sync's id for its
     * status URL (the Temporal run that answered: the one started, or the running one joined).
     */
    async sync(workspaceId: string, input: SyncInput): Promise<{ imported: number; done: boolean; syncId: string }> {
      let source: AnalyticsSource;
      if (input.attachmentId) {
        const attachment = await findAttachment(db, workspaceId, input.attachmentId);
        if (!attachment || attachment.status === 'deleted') throw fieldError('attachmentId', 'No attachment with this id');
        if (attachment.status !== 'ready') throw fieldError('attachmentId', 'The file has not been uploaded yet');
        source = { kind: 'csv', attachmentId: attachment.id };
      } else {
        if (!(await findAnalyticsConnection(db, workspaceId))) {
          throw new AppError('conflict', 'No analytics connection is configured: PUT /integrations/analytics first, or send an attachmentId');
        }
        source = { kind: 'matomo' };
      }
      const handle = await startAnalyticsSync(deps.temporal, deps.taskQueuePrefix, { workspaceId, source, from: input.from, until: input.until }).catch(() => {
        throw new AppError('service_unavailable', 'The sync could not be started; try again in a moment');
      });
      const syncId = analyticsSyncIdOf(source, handle.firstExecutionRunId);
      const result = handle.result();
      const outcome = await Promise.race([result, sleep(deps.syncWaitMs).then(() => null)]).catch((error: unknown) => {
        const answer = error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure ? syncFailureAnswer(error.cause, source) : null;
        throw answer ?? error;
      });
      if (outcome === null) {
        result.catch(() => undefined);
        const progress = await Promise.race([analyticsSyncProgress(handle), sleep(2_000).then(() => null)]).catch(() => null);
        return { imported: progress?.imported ?? 0, done: false, syncId };
      }
      return { imported: outcome.imported, done: true, syncId };
    },

    /** GET /integrations/analytics/syncs/:syncId: where the sync stands; 404 for an id this workspace never got. */
    async syncStatus(workspaceId: string, syncId: string) {
      const parsed = parseAnalyticsSyncId(syncId);
      const state = parsed
        ? await analyticsSyncState(deps.temporal, analyticsSyncWorkflowId(workspaceId, parsed.source), parsed.runId).catch(() => {
            throw new AppError('service_unavailable', 'The sync\'s status cannot be read right now; try again in a moment');
          })
        : null;
      if (!state) throw AppError.notFound('Analytics sync');
      return { syncId, ...state };
    },
  };
}

export type AnalyticsIntegrationService = ReturnType<typeof createAnalyticsIntegrationService>;
