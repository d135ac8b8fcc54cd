import type { Agent } from 'node:https';
import { get } from 'node:https';
import express, { type Router } from 'express';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import SnsPayloadValidator from 'sns-payload-validator';
import { AppError } from '../../core/errors';
import { parseSesNotification } from '../../core/ses-events';
import { recordProviderEvent, type Suppress } from './ses-events';

export interface CallbackDeps {
  db: Sequelize;
  logger: Logger;
  suppress: Suppress;
  /** Accepted SNS topics; empty accepts any topic outside production (see SNS_TOPIC_ARNS). */
  topicArns: string[];
  production: boolean;
  /** For fetching SNS certificates and confirming subscriptions; tests route it to a local server. */
  httpsAgent?: Agent;
}

/** SubscribeURL must be SNS's own host, like the certificate URL the validator accepts. */
const SUBSCRIBE_URL = /^https:\/\/sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?\//;

function confirmSubscription(url: string, agent: Agent | undefined): Promise<void> {
  if (!SUBSCRIBE_URL.test(url)) return Promise.reject(new Error('SubscribeURL is not an SNS URL'));
  return new Promise((resolve, reject) => {
    get(url, { agent, timeout: 10_000 }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`SNS answered ${res.statusCode} to the subscription confirmation`));
    }).on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * `POST /callbacks/ses`: SES delivery, bounce and complaint notifications over SNS HTTP(S). Nothing is
 * believed before the SNS signature checks out and the topic is one of ours.
 */
export function callbackRoutes(app: Router, deps: CallbackDeps): void {
  const validator = new SnsPayloadValidator({ requestAgent: deps.httpsAgent });
  // SNS posts JSON as text/plain.
  app.post('/callbacks/ses', express.text({ type: '*/*', limit: '256kb' }), async (req, res) => {
    let payload: SnsPayloadValidator.SnsPayload;
    try {
      payload = await validator.validate(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    } catch (error) {
      req.log.warn({ err: error }, 'SNS message refused: signature not valid');
      throw new AppError('unauthorized', 'The SNS signature does not verify');
    }
    const topicAllowed = deps.topicArns.length ? deps.topicArns.includes(payload.TopicArn) : !deps.production;
    if (!topicAllowed) throw new AppError('forbidden', `Topic ${payload.TopicArn} is not configured`, { need: 'SNS_TOPIC_ARNS' });

    if (payload.Type === 'SubscriptionConfirmation') {
      await confirmSubscription(payload.SubscribeURL ?? '', deps.httpsAgent);
      req.log.info({ topic: payload.TopicArn }, 'SNS subscription confirmed');
    } else if (payload.Type === 'Notification') {
      const event = parseSesNotification(parseJson(payload.Message));
      if (event) {
        const known = await recordProviderEvent(deps.db, deps.suppress, 'ses', payload.MessageId, event);
        if (!known) req.log.info({ providerMessageId: event.providerMessageId }, 'SES notification for an unknown message');
      }
    }
    res.status(200).json({ ok: true });
  });
}
