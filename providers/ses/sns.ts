import type { Agent } from 'node:https';
import { get } from 'node:https';
import SnsPayloadValidator from 'sns-payload-validator';
import type { ProviderEvent } from '../../core/delivery';
import { parseSesNotification } from './notifications';

/** An SNS HTTP(S) message whose signature checked out: a subscription confirmation or a notification. */
export type SnsEnvelope = SnsPayloadValidator.SnsPayload;

/** SubscribeURL must be SNS's own host, like the certificate URL the validator accepts. */
const SUBSCRIBE_URL = /^https:\/\/sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?\//;

export interface SnsMessages {
  /**
   * The envelope, once its signature verifies against SNS's certificate; rejects otherwise. A valid signature
   * proves only that SNS sent it: whether its topic is one of ours is the caller's check.
   */
  verify(body: string): Promise<SnsEnvelope>;
  /** Confirms a subscription by fetching its SubscribeURL, which must be on SNS's own host. */
  confirm(envelope: SnsEnvelope): Promise<void>;
}

/** `httpsAgent`: for fetching SNS certificates and confirming subscriptions; tests route it to a local server. */
export function snsMessages(httpsAgent?: Agent): SnsMessages {
  const validator = new SnsPayloadValidator({ requestAgent: httpsAgent });
  return {
    verify: (body) => validator.validate(body),
    confirm: (envelope) => confirmSubscription(envelope.SubscribeURL ?? '', httpsAgent),
  };
}

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

/** The SES event a notification envelope carries, or null for one this service does not act on. */
export function sesEventOf(envelope: SnsEnvelope): ProviderEvent | null {
  return parseSesNotification(parseJson(envelope.Message));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
