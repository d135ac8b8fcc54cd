import type { Sequelize } from 'sequelize';
import { type Keyring, openSecret } from '../core/secrets';
import { type AttemptVerdict, verdictOfStatus, WEBHOOK_DISABLE_AFTER_FAILING_MS, WEBHOOK_TIMEOUT_MS } from '../core/webhook-delivery';
import type { WebhookEvent } from '../core/webhook-events';
import { webhookBody } from '../core/webhook-payloads';
import { webhookHeaders } from '../core/webhook-signing';
import {
  type AttemptTarget,
  beginAttempt,
  type DeliveryState,
  endDelivery,
  findAttemptTarget,
  findEventSource,
  finishAttempt,
  storeDeliveryBody,
} from '../db/repositories/webhook-attempts';
import { postPublic, PublicFetchError, type PublicFetchOptions } from '../infra/public-fetch';
import { countEndpointDisabled, countWebhookAttempt, resultOfError, resultOfStatus } from './webhook-metrics';

export interface WebhookActivityDeps {
  db: Sequelize;
  keyring: Keyring;
  /** The SSRF-safe fetcher's options: WEBHOOKS_ALLOW_PRIVATE_TARGETS, and tests' resolvers. */
  fetch: Partial<PublicFetchOptions>;
}

export interface WebhookAttemptInput {
  workspaceId: string;
  deliveryId: string;
  /** The workflow run attempting; a newer run (a manual retry) takes the delivery over. */
  run: number;
  /** The wait before the next attempt if this one fails; null for the last attempt. */
  retryInMs: number | null;
}

/** What the workflow does next: stop (`succeeded`, `failed`) or wait and attempt again (`retrying`). */
export type WebhookAttemptOutcome = DeliveryState;

const USER_AGENT = 'messaging-webhooks/1.0';

/** Why an attempt got no answer, in words for the delivery log (the customer reads it). */
function describeFailure(error: unknown): string {
  if (!(error instanceof PublicFetchError)) return error instanceof Error ? error.message : String(error);
  if (error.reason === 'timeout') return `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`;
  if (error.reason === 'network') return `could not connect: ${error.message}`;
  return error.message;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const { db } = deps;

  /** The body every attempt of the delivery sends: built from its event at the first attempt, then stored. */
  async function bodyOf(workspaceId: string, target: AttemptTarget): Promise<string | null> {
    if (target.body !== null) return target.body;
    const source = await findEventSource(db, workspaceId, target);
    if (!source) return null;
    return storeDeliveryBody(db, target.deliveryId, JSON.stringify(webhookBody(target.event as WebhookEvent, source)));
  }

  async function post(workspaceId: string, target: AttemptTarget, body: string): Promise<{ statusCode: number | null; verdict: AttemptVerdict; error: string | null }> {
    // Opened here, used for this request only: no secret is ever an activity's input or result, or logged.
    const secrets = [target.secretSealed, target.previousSecretSealed].flatMap((sealed) => (sealed ? [openSecret(deps.keyring, { workspaceId, column: 'webhooks.secret', row: target.webhookId }, sealed)] : []));
    const headers = { ...webhookHeaders(secrets, target.deliveryId, new Date(), body), 'content-type': 'application/json', 'user-agent': USER_AGENT };
    try {
      const { statusCode } = await postPublic(target.url, { body, headers }, { ...deps.fetch, timeoutMs: WEBHOOK_TIMEOUT_MS });
      const verdict = verdictOfStatus(statusCode);
      countWebhookAttempt(resultOfStatus(statusCode));
      return { statusCode, verdict, error: verdict === 'succeeded' ? null : `the endpoint answered ${statusCode}` };
    } catch (error) {
      countWebhookAttempt(resultOfError(error));
      return { statusCode: null, verdict: 'failed', error: describeFailure(error) };
    }
  }

  return {
    /**
     * One attempt of a webhook delivery: signs the stored body (with the current secret, and the previous
     * one while a rotation lasts), POSTs it through the SSRF-safe fetcher (every address checked again:
     * DNS may have changed since the URL was saved), and records the answer with the endpoint's health.
     * Throws only when our own database fails, so Temporal retries that; the endpoint's failures are
     * outcomes, retried on the delivery schedule by the workflow.
     */
    async attemptWebhookDelivery(input: WebhookAttemptInput): Promise<WebhookAttemptOutcome> {
      const { workspaceId, deliveryId, run } = input;
      const target = await findAttemptTarget(db, workspaceId, deliveryId);
      // Deleted with its endpoint, finished, or taken over by a newer run: nothing left for this run.
      if (!target || target.status !== 'pending' || target.run !== run) return target?.status === 'succeeded' ? 'succeeded' : 'failed';
      if (!target.enabled) {
        await endDelivery(db, workspaceId, deliveryId, run, 'the endpoint is disabled');
        return 'failed';
      }
      const body = await bodyOf(workspaceId, target);
      if (body === null) {
        await endDelivery(db, workspaceId, deliveryId, run, 'the event no longer exists');
        return 'failed';
      }
      const attempt = await beginAttempt(db, workspaceId, deliveryId, run);
      if (attempt === null) return 'failed';
      const started = performance.now();
      const answer = await post(workspaceId, target, body);
      const finished = await finishAttempt(db, {
        workspaceId,
        deliveryId,
        webhookId: target.webhookId,
        attempt,
        ...answer,
        durationMs: Math.round(performance.now() - started),
        retryInMs: input.retryInMs,
        disableAfterMs: WEBHOOK_DISABLE_AFTER_FAILING_MS,
      });
      if (finished.disabledNow) countEndpointDisabled(answer.verdict === 'gone' ? 'gone' : 'failing');
      return finished.state;
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
