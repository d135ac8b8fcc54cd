import type { Agent } from 'node:https';
import express, { type Router } from 'express';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { sesEventOf, type SnsEnvelope, snsMessages } from '../../providers/ses/sns';
import { parkProviderEvent, recordProviderEvent, type Suppress } from '../../db/repositories/provider-events';
import { countProviderEvent } from '../../services/metrics/sends';

export interface CallbackDeps {
  db: Sequelize;
  logger: Logger;
  suppress: Suppress;
  /** Accepted SNS topics (SNS_TOPIC_ARNS; configuration requires them with SES). Empty accepts none. */
  topicArns: string[];
  /** For fetching SNS certificates and confirming subscriptions; tests route it to a local server. */
  httpsAgent?: Agent;
}

/**
 * `POST /callbacks/ses`: SES delivery, bounce and complaint notifications over SNS HTTP(S). Nothing is
 * believed before the SNS signature checks out and the topic is one of ours: a valid signature proves only
 * that SNS sent it, and any AWS account can make SNS post to this URL.
 */
export function callbackRoutes(app: Router, deps: CallbackDeps): void {
  const sns = snsMessages(deps.httpsAgent);
  // SNS posts JSON as text/plain.
  app.post('/callbacks/ses', express.text({ type: '*/*', limit: '256kb' }), async (req, res) => {
    let payload: SnsEnvelope;
    try {
      payload = await sns.verify(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    } catch (error) {
      req.log.warn({ err: error }, 'SNS message refused: signature not valid');
      throw new AppError('unauthorized', 'The SNS signature does not verify');
    }
    if (!deps.topicArns.includes(payload.TopicArn)) throw new AppError('forbidden', `Topic ${payload.TopicArn} is not configured`, { need: 'SNS_TOPIC_ARNS' });

    if (payload.Type === 'SubscriptionConfirmation') {
      await sns.confirm(payload);
      req.log.info({ topic: payload.TopicArn }, 'SNS subscription confirmed');
    } else if (payload.Type === 'Notification') {
      const event = sesEventOf(payload);
      if (event) {
        const outcome = await recordProviderEvent(deps.db, deps.suppress, 'ses', payload.MessageId, event);
        countProviderEvent('ses', 'email', event, outcome);
        const logged = { providerMessageId: event.providerMessageId, notificationId: payload.MessageId, type: event.type };
        if (outcome === 'unknown-message') {
          // Not dropped: recorded once the message's provider id is (replayParkedEvents, matchParkedEvents).
          await parkProviderEvent(deps.db, deps.suppress, 'ses', payload.MessageId, event);
          req.log.info(logged, 'SES notification for a message not known yet: parked');
        } else if (outcome === 'foreign-recipients') {
          req.log.warn(logged, 'SES notification naming none of the message\'s recipients: ignored');
        }
      }
    }
    res.status(200).json({ ok: true });
  });
}
