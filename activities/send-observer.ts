import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';

/**
 * What the send path tells operators: a log line with the message id for each event they may need to act
 * on, and a Prometheus counter for each, so an alert can fire without anyone reading logs.
 */
export interface SendObserver {
  /** A delivery attempt found an earlier attempt's claim expired without a provider id: it may have sent. */
  outcomeUnknown(workspaceId: string, messageId: string, previousClaim: string): void;
  /** The reconciler repaired a message (or restarted a campaign) whose workflow was closed or missing. */
  repaired(action: ReconcileAction, workspaceId: string, id: string, detail: string): void;
  /** Recipients suppressed since acceptance were not mailed. */
  suppressedAtDelivery(workspaceId: string, messageId: string, addresses: number, wholeMessage: boolean): void;
  /** A provider route's breaker opened or closed: one log line per change, never one per message. */
  breakerChanged(route: string, open: boolean, detail: string): void;
  /** Messages handed back to the outbox instead of sent: their route was down, or a transient failure. */
  handedBack(reason: HandBackReason, count: number): void;
}

export type HandBackReason = 'provider_unavailable' | 'breaker_open' | 'transient';

export type ReconcileAction = 'failed' | 'redispatched' | 'campaign_restarted';

export function createSendObserver(logger: Logger, registry?: Registry): SendObserver {
  const registers = registry ? [registry] : [];
  const unknown = new Counter({
    name: 'messaging_delivery_outcome_unknown_total',
    help: 'Provider calls whose outcome was unknown after an attempt died; each may have sent a message twice',
    registers,
  });
  const repairs = new Counter({
    name: 'messaging_reconciler_repairs_total',
    help: 'Unfinished messages (and campaigns) the reconciler repaired, by action',
    labelNames: ['action'],
    registers,
  });
  const suppressed = new Counter({
    name: 'messaging_delivery_suppressed_recipients_total',
    help: 'Recipients left out at delivery because they were suppressed after acceptance',
    registers,
  });
  const breakerChanges = new Counter({
    name: 'messaging_provider_breaker_changes_total',
    help: 'Provider route breakers opened or closed (the dispatcher exports each route\'s state)',
    labelNames: ['state'],
    registers,
  });
  const handedBack = new Counter({
    name: 'messaging_delivery_requeued_total',
    help: 'Messages handed back to the outbox instead of sent, by reason',
    labelNames: ['reason'],
    registers,
  });
  return {
    breakerChanged(route, open, detail) {
      breakerChanges.inc({ state: open ? 'open' : 'closed' });
      if (open) logger.warn({ route, detail }, 'delivery: provider route down; its messages wait in the outbox and the dispatcher probes it');
      else logger.info({ route, detail }, 'delivery: provider route back; dispatch resumes');
    },
    handedBack(reason, count) {
      handedBack.inc({ reason }, count);
    },
    outcomeUnknown(workspaceId, messageId, previousClaim) {
      unknown.inc();
      logger.warn({ workspaceId, messageId, previousClaim }, 'delivery: an earlier attempt died with an unknown outcome; sending again');
    },
    repaired(action, workspaceId, id, detail) {
      repairs.inc({ action });
      const subject = action === 'campaign_restarted' ? { campaignId: id } : { messageId: id };
      logger.warn({ workspaceId, ...subject, action, detail }, 'reconciler: repaired an unfinished message or campaign');
    },
    suppressedAtDelivery(workspaceId, messageId, addresses, wholeMessage) {
      suppressed.inc(addresses);
      logger.info({ workspaceId, messageId, addresses, wholeMessage }, 'delivery: recipients suppressed since acceptance left out');
    },
  };
}
