import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Activities } from '../../../activities';
import type { EnrollPageResult } from '../../../activities/automation-enroll';
import type { BounceMailOutcome } from '../../../activities/bounce-mail';
import type { FeedResult, SnapshotResult } from '../../../activities/campaigns';
import type { JourneyMessageOutcome } from '../../../services/acceptance/journey-message';
import type { BatchDelivery } from '../../../activities/delivery';
import type { CheckDomainResult } from '../../../activities/domains';
import type { ImportStep } from '../../../activities/imports';
import type { ProcessOutcome } from '../../../activities/inbox-mail';
import type { SweepReport } from '../../../activities/journey-sweeper';
import type { ReconcileReport } from '../../../activities/reconciler';
import type { WebhookAttemptOutcome } from '../../../activities/webhooks';
import type { SyncWindowTimes } from '../../../core/analytics/sync';
import type { JourneyGraph } from '../../../core/journeys/graph';
import type * as workflows from '../../../workflows';
import type { TimeSkippingEnv } from '../../helpers/time-skipping';

const HOUR = 60 * 60_000;

/** What a scenario's workflow sees of our activities: a script, typed against the real ones. */
type Fakes = Partial<Activities>;

/**
 * One recorded run of a workflow: the history the replay test checks every later change against. A
 * scenario takes the paths a real run takes (timers, retries, signals, continue-as-new, a child), so a
 * change that would break a workflow already running in production breaks its replay.
 */
export interface HistoryScenario {
  name: string;
  workflow: keyof typeof workflows;
  /** `now` is the test server's clock, which skipped time has moved past the wall clock. */
  args: (taskQueue: string, now: number) => unknown[];
  activities: Fakes;
  /**
   * Signals sent before the first workflow task, so they are in the history at a fixed place (the test
   * server skips idle time on its own, so a signal sent mid-wait would race the timer).
   */
  signalsAtStart?: Array<string | { name: string; args: unknown[] }>;
  /** Time skipped after the start, for a workflow that is not waited for. */
  drive?: (env: TimeSkippingEnv) => Promise<void>;
  /**
   * A workflow that continues as new for ever (a singleton, a domain's watch) is not waited for: after
   * `drive` the history of its first run is taken as it stands, and the chain is terminated.
   */
  continuesForever?: boolean;
}

const workspaceId = randomUUID();
const permanent = () => ApplicationFailure.create({ type: 'PermanentSendError', message: 'SMTP 550: mailbox unavailable' });

function sequence<T>(...answers: T[]): () => Promise<T> {
  return async () => (answers.length > 1 ? (answers.shift() as T) : answers[0]);
}

const checked = (status: 'pending' | 'verified'): CheckDomainResult => ({
  found: true,
  status,
  previousStatus: 'pending',
  detail: null,
  records: [],
});

/** Every node type of a journey: a deferred message, a wait of days, a branch, a wait_for_event that times out, an exit. */
const journeyGraph: JourneyGraph = {
  entry: 'welcome',
  nodes: [
    { id: 'welcome', type: 'message', preferredChannel: 'email', fallbackChain: ['telegram'], templateByChannel: { email: randomUUID() }, attachmentIds: [], next: 'two-days' },
    { id: 'two-days', type: 'wait', durationMs: 48 * HOUR, next: 'morning' },
    { id: 'morning', type: 'wait', atLocalTime: '09:00', next: 'vip' },
    { id: 'vip', type: 'branch', condition: { type: 'group', operator: 'and', rules: [] }, then: 'click', else: 'bye' },
    { id: 'click', type: 'wait_for_event', event: 'link.clicked', match: {}, timeoutMs: 24 * HOUR, onEvent: 'bye', onTimeout: 'reminder' },
    { id: 'reminder', type: 'message', preferredChannel: 'email', fallbackChain: [], templateByChannel: { email: randomUUID() }, attachmentIds: [], next: 'bye' },
    { id: 'bye', type: 'exit' },
  ],
};

/** Fails the calls numbered in `outages` (1-based) as an outage would, so the retry policy shows in the history. */
function withOutages<T>(outages: number[], answer: () => Promise<T>): () => Promise<T> {
  let calls = 0;
  return async () => {
    calls += 1;
    if (outages.includes(calls)) throw new Error('connection refused');
    return answer();
  };
}

const syncWindow: SyncWindowTimes = { since: '2026-01-01T00:00:00.000Z', until: '2026-01-31T00:00:00.000Z' };

const reconcileReport: ReconcileReport = { checked: 0, running: 0, failed: 0, redispatched: 0 };

export const SCENARIOS: HistoryScenario[] = [
  {
    name: 'send-message-sent',
    workflow: 'sendMessageWorkflow',
    args: (taskQueue) => [{ workspaceId, messageId: randomUUID(), sendsTaskQueue: taskQueue }],
    activities: { deliverMessage: sequence<'sent'>('sent') },
  },
  {
    name: 'send-message-failed',
    workflow: 'sendMessageWorkflow',
    args: (taskQueue) => [{ workspaceId, messageId: randomUUID(), sendsTaskQueue: taskQueue }],
    activities: {
      deliverMessage: async () => {
        throw permanent();
      },
      markMessageFailed: async () => undefined,
    },
  },
  {
    name: 'send-batch-with-retry-round',
    workflow: 'sendBatchWorkflow',
    args: (taskQueue) => [{ workspaceId, messageIds: [randomUUID(), randomUUID()], sendsTaskQueue: taskQueue }],
    activities: {
      deliverMessages: sequence<BatchDelivery>({ sent: 1, failed: 0, retry: ['second'] }, { sent: 1, failed: 0, retry: [] }),
    },
  },
  {
    name: 'campaign-scheduled-paused',
    workflow: 'campaignWorkflow',
    args: (_taskQueue, now) => [{ workspaceId, campaignId: randomUUID(), scheduledAt: new Date(now + HOUR).toISOString() }],
    activities: {
      snapshotCampaign: sequence<SnapshotResult>({ state: 'ready', recipients: 3 }),
      feedCampaign: sequence<FeedResult>(
        { cursor: 1, state: 'more', status: 'sending' },
        { cursor: 1, state: 'paused', status: 'paused' },
        { cursor: 3, state: 'done', status: 'sent' },
      ),
      holdCampaignMessages: sequence<number | null>(1),
    },
    // Taken before the pause: the paused campaign then waits out its ten-minute recheck.
    signalsAtStart: ['resume'],
  },
  {
    name: 'campaign-canceled-while-scheduled',
    workflow: 'campaignWorkflow',
    args: (_taskQueue, now) => [{ workspaceId, campaignId: randomUUID(), scheduledAt: new Date(now + 48 * HOUR).toISOString() }],
    activities: {},
    signalsAtStart: ['cancel'],
  },
  {
    name: 'domain-verification-verified',
    workflow: 'domainVerificationWorkflow',
    args: (_taskQueue, now) => [{ workspaceId, domainId: randomUUID(), checkUntil: new Date(now + 72 * HOUR).toISOString() }],
    activities: { checkDomain: sequence(checked('pending'), checked('verified')) },
    drive: async (env) => env.sleep(HOUR),
    continuesForever: true,
  },
  {
    name: 'domain-check',
    workflow: 'domainCheckWorkflow',
    args: () => [{ workspaceId, domainId: randomUUID() }],
    activities: { checkDomain: sequence(checked('verified')) },
  },
  {
    name: 'domain-watchdog-starts-a-verification',
    workflow: 'domainWatchdogWorkflow',
    args: () => [],
    activities: {
      findUnwatchedDomains: sequence([{ id: randomUUID(), workspaceId }]),
      // The verification it starts finds its domain gone and ends.
      checkDomain: sequence<CheckDomainResult>({ found: false }),
    },
    drive: async (env) => env.sleep(HOUR + 60_000),
    continuesForever: true,
  },
  {
    name: 'message-reconciler-rounds',
    workflow: 'messageReconcilerWorkflow',
    args: () => [{ intervalMs: 60_000, round: { staleAfterMs: 600_000, limit: 10, recheckAfterMs: 900_000 } }],
    activities: {
      reconcileMessages: sequence({ ...reconcileReport, checked: 10 }, reconcileReport),
      reconcileCampaigns: sequence({ checked: 0, restarted: 0 }),
      matchParkedProviderEvents: sequence({ recorded: 0, expired: 0 }),
    },
    drive: async (env) => env.sleep(3 * 60_000),
    continuesForever: true,
  },
  {
    name: 'automation-enroll-pages',
    workflow: 'automationEnrollWorkflow',
    args: () => [{ workspaceId, automationId: randomUUID(), requestId: randomUUID(), audience: { listId: randomUUID() }, pageSize: 2 }],
    activities: {
      enrollAudiencePage: sequence<EnrollPageResult>(
        { state: 'more', cursor: '00000000-0000-4000-8000-000000000001', enrolled: 2 },
        { state: 'more', cursor: '00000000-0000-4000-8000-000000000003', enrolled: 1 },
        { state: 'done', cursor: '00000000-0000-4000-8000-000000000004', enrolled: 1 },
      ),
    },
  },
  {
    name: 'journey-sweeper-rounds',
    workflow: 'journeySweeperWorkflow',
    args: () => [{ intervalMs: 15_000, olderThanMs: 30_000, limit: 10 }],
    activities: {
      sweepJourneys: sequence<SweepReport>({ unstarted: 10, started: 10, unprocessed: 0, processed: 0 }, { unstarted: 0, started: 0, unprocessed: 1, processed: 1 }),
    },
    drive: async (env) => env.sleep(60_000),
    continuesForever: true,
  },
  {
    name: 'webhook-delivery-retried-then-succeeded',
    workflow: 'webhookDeliveryWorkflow',
    args: () => [{ workspaceId, deliveryId: randomUUID(), run: 1 }],
    activities: { attemptWebhookDelivery: sequence<WebhookAttemptOutcome>('retrying', 'retrying', 'succeeded') },
  },
  {
    name: 'journey-every-node-type',
    workflow: 'journeyWorkflow',
    args: () => [{ workspaceId, enrollmentId: randomUUID() }],
    activities: {
      loadJourney: async () => ({ automationId: randomUUID(), versionId: randomUUID(), contactId: randomUUID(), status: 'active', triggerEventId: null, graph: journeyGraph, goal: { event: 'order.placed', match: {} } }),
      recordJourneyStep: sequence(true),
      enqueueJourneyMessage: sequence<JourneyMessageOutcome>(
        { state: 'deferred', until: new Date(Date.now() + 8 * HOUR).toISOString(), reason: 'quiet_hours' },
        { state: 'queued', messageId: randomUUID(), channel: 'email' },
      ),
      localTimeAfter: async (_workspaceId: string, _contactId: string, _at: string, afterIso: string) => new Date(Date.parse(afterIso) + 3 * HOUR).toISOString(),
      evaluateJourneyBranch: sequence(true),
      finishEnrollment: sequence(true),
    },
  },
  // Since issue 33 a new journey loads and records its entry node in one local activity (asked for by its start).
  {
    name: 'journey-enters-at-once',
    workflow: 'journeyWorkflow',
    args: () => [{ workspaceId, enrollmentId: randomUUID(), enter: 'at-once' }],
    activities: {
      enterJourney: async () => ({ automationId: randomUUID(), versionId: randomUUID(), contactId: randomUUID(), status: 'active', triggerEventId: null, graph: journeyGraph, goal: null, entered: true }),
      recordJourneyStep: sequence(true),
      enqueueJourneyMessage: sequence<JourneyMessageOutcome>({ state: 'queued', messageId: randomUUID(), channel: 'email' }),
      localTimeAfter: async (_workspaceId: string, _contactId: string, _at: string, afterIso: string) => new Date(Date.parse(afterIso) + 3 * HOUR).toISOString(),
      evaluateJourneyBranch: sequence(true),
      finishEnrollment: sequence(true),
    },
  },
  // A goal event that came before the journey loaded, in the signal shape written before signals carried
  // ids only (the event's properties, matched by the workflow): runs of that shape must still replay.
  {
    name: 'journey-goal-signal-with-properties',
    workflow: 'journeyWorkflow',
    args: () => [{ workspaceId, enrollmentId: randomUUID() }],
    activities: {
      loadJourney: async () => ({ automationId: randomUUID(), versionId: randomUUID(), contactId: randomUUID(), status: 'active', triggerEventId: null, graph: journeyGraph, goal: { event: 'order.placed', match: { plan: 'pro' } } }),
      finishEnrollment: sequence(true),
    },
    signalsAtStart: [{ name: 'event', args: [{ eventId: randomUUID(), name: 'order.placed', properties: { plan: 'pro' }, occurredAt: new Date(0).toISOString() }] }],
  },
  // The same in today's shape: ids and the verdict matched where the event is stored, no properties.
  {
    name: 'journey-goal-signal-ids-only',
    workflow: 'journeyWorkflow',
    args: () => [{ workspaceId, enrollmentId: randomUUID() }],
    activities: {
      loadJourney: async () => ({ automationId: randomUUID(), versionId: randomUUID(), contactId: randomUUID(), status: 'active', triggerEventId: null, graph: journeyGraph, goal: { event: 'order.placed', match: { plan: 'pro' } } }),
      finishEnrollment: sequence(true),
    },
    signalsAtStart: [{ name: 'event', args: [{ eventId: randomUUID(), name: 'order.placed', matched: { goal: true, nodeIds: [] }, occurredAt: new Date(0).toISOString() }] }],
  },
  {
    name: 'inbound-mail-reply-from-a-contact',
    workflow: 'inboundMailWorkflow',
    args: () => [{ workspaceId, inboxMessageId: randomUUID() }],
    activities: {
      processInboundMail: (() => {
        let attempts = 0;
        return async (): Promise<ProcessOutcome> => {
          attempts += 1;
          // The first attempt meets our database down; the worker retries it (local: the marker records the outcome).
          if (attempts === 1) throw new Error('connection refused');
          return { status: 'processed', threadId: randomUUID(), contactEvent: 'email.replied' };
        };
      })(),
      matchInboundContactEvent: sequence({ matched: true }),
    },
  },
  {
    name: 'usage-rollup-closes-a-month',
    workflow: 'usageRollupWorkflow',
    args: () => [{ periodStart: '2026-01-01' }],
    activities: { closeUsagePeriod: sequence({ statements: 2 }) },
    continuesForever: true,
  },
  // The API's transaction not yet committed at the first look (a timer, a second look), then three slices,
  // one of them retried after an outage, and the URL's copy discarded.
  {
    name: 'import-late-job-then-slices',
    workflow: 'importWorkflow',
    args: () => [{ workspaceId, importId: randomUUID() }],
    activities: {
      prepareImport: sequence<ImportStep>({ state: 'missing' }, { state: 'importing' }),
      importSlice: withOutages([2], sequence<ImportStep>({ state: 'importing' }, { state: 'importing' }, { state: 'completed' })),
      discardImportFile: async () => undefined,
    },
  },
  // A cancel noticed before the first slice: the job ends canceled and its file is discarded.
  {
    name: 'import-canceled-before-a-slice',
    workflow: 'importWorkflow',
    args: () => [{ workspaceId, importId: randomUUID() }],
    activities: {
      prepareImport: sequence<ImportStep>({ state: 'importing' }),
      discardImportFile: async () => undefined,
    },
    signalsAtStart: ['cancel'],
  },
  // Two pages (the second after one failed attempt) and the end recorded on the connection.
  {
    name: 'analytics-sync-two-pages',
    workflow: 'analyticsSyncWorkflow',
    args: () => [{ workspaceId, source: { kind: 'matomo' } }],
    activities: {
      beginAnalyticsSync: sequence(syncWindow),
      syncAnalyticsPage: withOutages([2], sequence<{ imported: number; nextCursor: string | null }>({ imported: 3, nextCursor: 'page-2' }, { imported: 1, nextCursor: null })),
      finishAnalyticsSync: async () => undefined,
    },
  },
  // The analytics product down for all three attempts: the sync ends failed, its reason on the connection.
  {
    name: 'analytics-sync-outage-ends-it',
    workflow: 'analyticsSyncWorkflow',
    args: () => [{ workspaceId, source: { kind: 'matomo' } }],
    activities: {
      beginAnalyticsSync: sequence(syncWindow),
      syncAnalyticsPage: withOutages([1, 2, 3], async () => ({ imported: 0, nextCursor: null })),
      finishAnalyticsSync: async () => undefined,
    },
  },
  // A bounce report read after one failed attempt (the database down): a local activity, so the marker
  // records the outcome.
  {
    name: 'bounce-mail-recorded-after-a-retry',
    workflow: 'bounceMailWorkflow',
    args: () => [{ blobKey: `inbound/${randomUUID()}.eml`, token: 'token', digest: randomUUID() }],
    activities: { processBounceMail: withOutages([1], sequence<BounceMailOutcome>('recorded')) },
  },
];
