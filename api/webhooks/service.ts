import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { type Keyring, sealSecret } from '../../core/secrets';
import { MAX_WEBHOOKS_PER_WORKSPACE } from '../../core/webhook-events';
import { generateWebhookSecret } from '../../core/webhook-signing';
import { type DeliveryStatus, findWebhookDelivery, listWebhookDeliveries, requeueWebhookDelivery } from '../../db/repositories/webhook-deliveries';
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookChanges,
  type WebhookRecord,
} from '../../db/repositories/webhooks';
import { checkPublicUrl, PublicFetchError, type PublicFetchOptions } from '../../infra/public-fetch';

/** After a rotation the old secret signs too for this long, so receivers can switch without losing a request. */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** A URL's host must resolve within this while the request waits. */
const URL_CHECK_TIMEOUT_MS = 5_000;

export interface WebhookServiceDeps {
  db: Sequelize;
  keyring: Keyring;
  /** The SSRF-safe fetcher's options: WEBHOOKS_ALLOW_PRIVATE_TARGETS, and tests' resolvers. */
  fetch: Partial<PublicFetchOptions>;
}

export function createWebhookService(deps: WebhookServiceDeps) {
  const { db } = deps;

  /** The same rules as every call to it (infra/public-fetch.ts), answered as a validation error. */
  async function checkUrl(url: string): Promise<void> {
    try {
      await checkPublicUrl(url, { ...deps.fetch, timeoutMs: URL_CHECK_TIMEOUT_MS });
    } catch (error) {
      if (!(error instanceof PublicFetchError)) throw error;
      const rule = deps.fetch.allowPrivateTargets ? 'must be a reachable http(s) URL' : 'must be https and resolve to public addresses only';
      throw AppError.validation({ formErrors: [], fieldErrors: { url: [`${rule}: ${error.message}`] } });
    }
  }

  async function get(workspaceId: string, id: string): Promise<WebhookRecord> {
    const webhook = await findWebhook(db, workspaceId, id);
    if (!webhook) throw AppError.notFound('Webhook');
    return webhook;
  }

  return {
    list: (workspaceId: string) => listWebhooks(db, workspaceId),
    get,

    /** Creates an endpoint with a new secret, which is answered this once and then only ever stored sealed. */
    async create(workspaceId: string, input: { url: string; description?: string | null; events: string[]; enabled: boolean }) {
      await checkUrl(input.url);
      const secret = generateWebhookSecret();
      const id = randomUUID();
      const webhook = await insertWebhook(
        db,
        workspaceId,
        { id, url: input.url, description: input.description ?? null, events: input.events, enabled: input.enabled, secretSealed: sealSecret(deps.keyring, { workspaceId, column: 'webhooks.secret', row: id }, secret) },
        MAX_WEBHOOKS_PER_WORKSPACE,
      );
      if (webhook === 'limit') throw new AppError('conflict', `A workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks`);
      return { webhook, secret };
    },

    async update(workspaceId: string, id: string, changes: WebhookChanges) {
      await get(workspaceId, id);
      if (changes.url !== undefined) await checkUrl(changes.url);
      const webhook = await updateWebhook(db, workspaceId, id, changes);
      if (!webhook) throw AppError.notFound('Webhook');
      return webhook;
    },

    async remove(workspaceId: string, id: string) {
      const webhook = await deleteWebhook(db, workspaceId, id);
      if (!webhook) throw AppError.notFound('Webhook');
      return webhook;
    },

    /** A new secret, answered once; the previous one keeps signing for ROTATION_OVERLAP_MS. */
    async rotateSecret(workspaceId: string, id: string) {
      const secret = generateWebhookSecret();
      const webhook = await rotateWebhookSecret(db, workspaceId, id, sealSecret(deps.keyring, { workspaceId, column: 'webhooks.secret', row: id }, secret), new Date(Date.now() + ROTATION_OVERLAP_MS));
      if (!webhook) throw AppError.notFound('Webhook');
      return { webhook, secret };
    },

    async deliveries(workspaceId: string, id: string, filters: { status?: DeliveryStatus; limit: number; offset: number }) {
      await get(workspaceId, id);
      return listWebhookDeliveries(db, workspaceId, id, filters);
    },

    /** Sends a finished delivery again (same body, same webhook-id) through the outbox, on a full schedule. */
    async retry(workspaceId: string, id: string, deliveryId: string) {
      const webhook = await get(workspaceId, id);
      if (!webhook.enabled) throw new AppError('conflict', 'The webhook is disabled; enable it (PATCH enabled: true) before retrying its deliveries');
      const outcome = await requeueWebhookDelivery(db, workspaceId, id, deliveryId);
      if (!outcome) throw AppError.notFound('Webhook delivery');
      if (outcome === 'pending') throw new AppError('conflict', 'The delivery is still being attempted; see its nextAttemptAt');
      const delivery = await findWebhookDelivery(db, workspaceId, id, deliveryId);
      if (!delivery) throw AppError.notFound('Webhook delivery');
      return delivery;
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
