import { randomUUID } from 'node:crypto';
import express, { type Request, type Router } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { type Keyring, openSecret } from '../../core/secrets';
import { insertPlatformEventOnce } from '../../db/repositories/platform-events';
import { findTwilioIntegration, parkTwilioStatus, recordInbound, recordTwilioStatus } from '../../db/repositories/whatsapp';
import { type TwilioForm, twilioInboundOf, twilioSignatureValid, twilioStatusOf } from '../../providers/twilio/callbacks';
import { countSend } from '../../services/metrics/sends';

export interface TwilioCallbackDeps {
  db: Sequelize;
  keyring: Keyring;
  /** PUBLIC_BASE_URL: Twilio signs the URL it was given, which is under it, not the one this process sees. */
  publicBaseUrl: string;
  redis: Redis;
  /** TWILIO_PARKED_PER_WORKSPACE_PER_HOUR: statuses of unknown SIDs parked per workspace per hour. */
  parkedPerHour: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Twilio's reply to an inbound message is TwiML; an empty response sends nothing back to the customer. */
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

/**
 * `POST /callbacks/twilio/:workspaceId/status` (message statuses) and `/inbound` (customers' messages).
 * Nothing is believed before `X-Twilio-Signature` checks out against the workspace's own auth token and the
 * public URL (the library's validateRequest, over the form parameters): the path names the workspace, and
 * only its token can sign for it. An unknown workspace answers the same 403 as a bad signature.
 */
export function twilioCallbackRoutes(app: Router, deps: TwilioCallbackDeps): void {
  const form = express.urlencoded({ extended: false, limit: '64kb' });
  const base = deps.publicBaseUrl.replace(/\/$/, '');
  // A workspace holds its own auth token, so it can sign as many statuses for made-up SIDs as it likes;
  // each would wait 7 days in parked_provider_events. Real early statuses are a race of seconds, and few.
  const parking = new RateLimiterRedis({
    storeClient: deps.redis,
    keyPrefix: 'rl:parked:twilio',
    points: deps.parkedPerHour,
    duration: 3_600,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: 'rl:parked:twilio:local', points: deps.parkedPerHour, duration: 3_600 }),
  });

  async function verified(req: Request): Promise<{ workspaceId: string; body: TwilioForm }> {
    const workspaceId = String(req.params.workspaceId);
    const body = (req.body ?? {}) as TwilioForm;
    const integration = UUID.test(workspaceId) ? await findTwilioIntegration(deps.db, workspaceId) : null;
    const signature = req.get('x-twilio-signature') ?? '';
    const valid = integration !== null && signature !== ''
      && twilioSignatureValid(openSecret(deps.keyring, { workspaceId, column: 'twilio_integrations.auth_token' }, integration.authTokenSealed), signature, `${base}${req.originalUrl}`, body);
    if (!valid) {
      req.log.warn({ workspaceId }, 'Twilio callback refused: signature not valid');
      throw new AppError('forbidden', 'The X-Twilio-Signature does not verify', { need: 'X-Twilio-Signature' });
    }
    return { workspaceId, body };
  }

  app.post('/callbacks/twilio/:workspaceId/status', form, async (req, res) => {
    const { workspaceId, body } = await verified(req);
    const { status, event, messageSid, errorCode } = twilioStatusOf(body);
    if (event && messageSid) {
      const at = new Date();
      const outcome = await recordTwilioStatus(deps.db, workspaceId, messageSid, status, event, at, errorCode);
      // Twilio's own `sent` repeats what the send path counted; `read` is engagement, not delivery.
      if (outcome === 'recorded' && (event.type === 'delivered' || event.type === 'failed')) countSend(event.type, 'twilio', 'whatsapp');
      // Twilio can be quicker than the send's record of the SID: kept until the SID is known (expires after 7 days).
      if (outcome === 'unknown-message') {
        const allowed = await parking.consume(workspaceId).catch((rejection: unknown) => {
          if (rejection instanceof RateLimiterRes) return null;
          throw rejection;
        });
        if (!allowed) {
          req.log.warn({ workspaceId, messageSid, status }, 'Twilio status for an unknown SID not parked: the workspace\'s hourly allowance is used up');
          res.setHeader('Retry-After', '3600');
          throw new AppError('rate_limit_exceeded', 'Too many statuses for unknown messages', { limit: deps.parkedPerHour, retryAfter: 3_600 });
        }
        await parkTwilioStatus(deps.db, workspaceId, messageSid, status, at, errorCode);
        req.log.info({ workspaceId, messageSid, status }, 'Twilio status for a SID not recorded yet: parked');
      }
    }
    res.status(200).end();
  });

  app.post('/callbacks/twilio/:workspaceId/inbound', form, async (req, res) => {
    const { workspaceId, body } = await verified(req);
    const inbound = twilioInboundOf(body);
    if (inbound) {
      await recordInbound(deps.db, workspaceId, inbound.from, new Date());
      const { providerMessageId } = inbound;
      await insertPlatformEventOnce(
        deps.db,
        workspaceId,
        {
          type: 'message.received',
          data: { channel: 'whatsapp', from: inbound.from, text: inbound.text, media: inbound.media, providerMessageId },
        },
        // Twilio names every inbound message; one without a name cannot be told from a repeat, so it stands alone.
        providerMessageId ?? randomUUID(),
      );
    }
    res.status(200).type('text/xml').send(EMPTY_TWIML);
  });
}
