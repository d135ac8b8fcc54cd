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

/** The same rules as every call to it (infra/public-fetch.ts), answered as a validation error. */
export async function checkWebhookUrl(deps: WebhookServiceDeps, url: string): Promise<void> {
  try {
    await checkPublicUrl(url, { ...deps.fetch, timeoutMs: URL_CHECK_TIMEOUT_MS });
  } catch (error) {
    if (!(error instanceof PublicFetchError)) throw error;
    const rule = deps.fetch.allowPrivateTargets ? 'must be a reachable http(s) URL' : 'must be https and resolve to public addresses only';
    throw AppError.validation({ formErrors: [], fieldErrors: { url: [`${rule}: ${error.message}`] } });
  }
}

export async function getWebhook({ db }: WebhookServiceDeps, workspaceId: string, id: string): Promise<WebhookRecord> {
  const webhook = await findWebhook(db, workspaceId, id);
  if (!webhook) throw AppError.notFound('Webhook');
  return webhook;
}

/** Creates an endpoint with a new secret, which is answered this once and then only ever stored sealed. */
export async function createWebhook(deps: WebhookServiceDeps, workspaceId: string, input: { url: string; description?: string | null; events: string[]; enabled: boolean }) {
  await checkWebhookUrl(deps, input.url);
  const secret = generateWebhookSecret();
  const id = randomUUID();
  const webhook = await insertWebhook(
    deps.db,
    workspaceId,
    { id, url: input.url, description: input.description ?? null, events: input.events, enabled: input.enabled, secretSealed: sealSecret(deps.keyring, { workspaceId, column: 'webhooks.secret', row: id }, secret) },
    MAX_WEBHOOKS_PER_WORKSPACE,
  );
  if (webhook === 'limit') throw new AppError('conflict', `A workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks`);
  return { webhook, secret };
}

export async function changeWebhook(deps: WebhookServiceDeps, workspaceId: string, id: string, changes: WebhookChanges) {
  await getWebhook(deps, workspaceId, id);
  if (changes.url !== undefined) await checkWebhookUrl(deps, changes.url);
  const webhook = await updateWebhook(deps.db, workspaceId, id, changes);
  if (!webhook) throw AppError.notFound('Webhook');
  return webhook;
}

export async function removeWebhook({ db }: WebhookServiceDeps, workspaceId: string, id: string) {
  const webhook = await deleteWebhook(db, workspaceId, id);
  if (!webhook) throw AppError.notFound('Webhook');
  return webhook;
}

/** A new secret, answered once; the previous one keeps signing for ROTATION_OVERLAP_MS. */
export async function rotateSecret(deps: WebhookServiceDeps, workspaceId: string, id: string) {
  const secret = generateWebhookSecret();
  const webhook = await rotateWebhookSecret(deps.db, workspaceId, id, sealSecret(deps.keyring, { workspaceId, column: 'webhooks.secret', row: id }, secret), new Date(Date.now() + ROTATION_OVERLAP_MS));
  if (!webhook) throw AppError.notFound('Webhook');
  return { webhook, secret };
}

export async function deliveriesOf(deps: WebhookServiceDeps, workspaceId: string, id: string, filters: { status?: DeliveryStatus; limit: number; offset: number }) {
  await getWebhook(deps, workspaceId, id);
  return listWebhookDeliveries(deps.db, workspaceId, id, filters);
}

/** Sends a finished delivery again (same body, same webhook-id) through the outbox, on a full schedule. */
export async function retryDelivery(deps: WebhookServiceDeps, workspaceId: string, id: string, deliveryId: string) {
  const webhook = await getWebhook(deps, workspaceId, id);
  if (!webhook.enabled) throw new AppError('conflict', 'The webhook is disabled; enable it (PATCH enabled: true) before retrying its deliveries');
  const outcome = await requeueWebhookDelivery(deps.db, workspaceId, id, deliveryId);
  if (!outcome) throw AppError.notFound('Webhook delivery');
  if (outcome === 'pending') throw new AppError('conflict', 'The delivery is still being attempted; see its nextAttemptAt');
  const delivery = await findWebhookDelivery(deps.db, workspaceId, id, deliveryId);
  if (!delivery) throw AppError.notFound('Webhook delivery');
  return delivery;
}

export function createWebhookService(deps: WebhookServiceDeps) {
  return {
    list: (workspaceId: string) => listWebhooks(deps.db, workspaceId),
    get: (workspaceId: string, id: string) => getWebhook(deps, workspaceId, id),
    create: (workspaceId: string, input: { url: string; description?: string | null; events: string[]; enabled: boolean }) => createWebhook(deps, workspaceId, input),
    update: (workspaceId: string, id: string, changes: WebhookChanges) => changeWebhook(deps, workspaceId, id, changes),
    remove: (workspaceId: string, id: string) => removeWebhook(deps, workspaceId, id),
    rotateSecret: (workspaceId: string, id: string) => rotateSecret(deps, workspaceId, id),
    deliveries: (workspaceId: string, id: string, filters: { status?: DeliveryStatus; limit: number; offset: number }) => deliveriesOf(deps, workspaceId, id, filters),
    retry: (workspaceId: string, id: string, deliveryId: string) => retryDelivery(deps, workspaceId, id, deliveryId),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
