import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { dispatchWorkflowId } from '../core/breaker';
import { type DispatchedMessage, TEMPORAL_PRIORITY, temporalPriorityOf } from '../core/dispatch';
import {
  automationEnrollWorkflowId,
  bounceMailWorkflowId,
  campaignWorkflowId,
  enrollmentWorkflowId,
  importWorkflowId,
  inboundMailWorkflowId,
  DOMAIN_WATCHDOG_WORKFLOW_ID,
  JOURNEY_SWEEPER_WORKFLOW_ID,
  MESSAGE_RECONCILER_WORKFLOW_ID,
  sendBatchWorkflowId,
  sendWorkflowId,
  USAGE_ROLLUP_WORKFLOW_ID,
  webhookDeliveryWorkflowId,
} from '../core/ids';
import { taskQueueName } from '../core/task-queues';
import { type AnalyticsSyncRequest, analyticsSyncWorkflowId } from '../core/analytics/sync';
import { analyticsSyncWorkflow } from './analytics-sync';
import { campaignWorkflow, cancelCampaignSignal, pauseCampaignSignal, resumeCampaignSignal } from './campaign';
import { searchAttributes } from './search-attributes';
import { domainWatchdogWorkflow } from './domain-watchdog';
import { automationEnrollWorkflow, type AutomationEnrollInput } from './automation-enroll';
import { cancelImportSignal, importWorkflow } from './import';
import { inboundMailWorkflow } from './inbound-mail';
import { bounceMailWorkflow } from './bounce-mail';
import type { BounceMailInput } from '../activities/bounce-mail';
import { journeyWorkflow } from './journey';
import { journeySweeperWorkflow } from './journey-sweeper';
import { exitEnrollmentSignal, type ExitRequestReason, type JourneyEvent, journeyEventSignal } from './journey-signals';
import type { MessageReconcilerInput } from './message-reconciler';
import { messageReconcilerWorkflow } from './message-reconciler';
import { sendBatchWorkflow } from './send-batch';
import { sendMessageWorkflow } from './send-message';
import { usageRollupWorkflow } from './usage-rollup';
import { webhookDeliveryWorkflow, type WebhookDeliveryInput } from './webhook-delivery';

/**
 * Every workflow start of the service, in one module the API and the workers share (never bundled into
 * workflow code: workflows/index.ts does not reach it). Each start carries its task queue, its Temporal
 * priority and fairness key (the workspace), and the search attributes operators find it by.
 */

/** Where control-plane work runs: its own queue, first in priority, fair between workspaces. */
export function controlPlaneStart(taskQueuePrefix: string, workspaceId?: string): Pick<WorkflowStartOptions, 'taskQueue' | 'priority' | 'typedSearchAttributes'> {
  return {
    taskQueue: taskQueueName(taskQueuePrefix, 'control'),
    priority: { priorityKey: TEMPORAL_PRIORITY.control, ...(workspaceId && { fairnessKey: workspaceId }) },
    typedSearchAttributes: searchAttributes({ WorkspaceId: workspaceId }),
  };
}

/** A start that found its workflow already running (a retry, a second dispatcher) succeeded. */
async function startOnce(start: () => Promise<unknown>): Promise<void> {
  try {
    await start();
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/**
 * The send workflow of one transactional message, `send:<messageId>`, which operators inspect and retry in
 * the Temporal UI. The id rejects a second start, so two dispatchers can never run one message twice. A
 * message handed back to the outbox (its provider down, a transient failure) gets `send:<messageId>:<n>`
 * on its n-th dispatch (core/breaker.ts); the row's workflow_id names the current one.
 */
export async function startSendWorkflow(client: Client, taskQueuePrefix: string, message: DispatchedMessage): Promise<string> {
  const workflowId = dispatchWorkflowId(sendWorkflowId(message.messageId), message.round);
  await startOnce(() =>
    client.workflow.start(sendMessageWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: message.workspaceId, messageId: message.messageId, sendsTaskQueue: taskQueueName(taskQueuePrefix, 'sends') }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: temporalPriorityOf(message.kind), fairnessKey: message.workspaceId },
      typedSearchAttributes: searchAttributes({
        WorkspaceId: message.workspaceId,
        MessageId: message.messageId,
        Kind: message.kind,
        Channel: message.channel,
        ContactId: message.contactId,
        CampaignId: message.campaignId,
        EnrollmentId: message.enrollmentId,
      }),
    }),
  );
  return workflowId;
}

/**
 * One batch of bulk messages (a campaign's or a journey's) of one workspace: one workflow and one delivery
 * activity call for the whole batch, each message still claimed and recorded on its own.
 */
export async function startSendBatchWorkflow(client: Client, taskQueuePrefix: string, batch: DispatchedMessage[]): Promise<string> {
  const [first] = batch;
  const workflowId = dispatchWorkflowId(sendBatchWorkflowId(first.messageId), first.round);
  await startOnce(() =>
    client.workflow.start(sendBatchWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: first.workspaceId, messageIds: batch.map((message) => message.messageId), sendsTaskQueue: taskQueueName(taskQueuePrefix, 'sends') }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: temporalPriorityOf(first.kind), fairnessKey: first.workspaceId },
      typedSearchAttributes: searchAttributes({
        WorkspaceId: first.workspaceId,
        Kind: first.kind,
        Channel: first.channel,
        CampaignId: first.campaignId,
        EnrollmentId: first.enrollmentId,
      }),
    }),
  );
  return workflowId;
}

/**
 * One run of a webhook delivery, on the control plane's queue and priority with the workspace as fairness
 * key, so a workspace's burst of events neither waits behind sends nor crowds out other workspaces.
 */
export async function startWebhookDeliveryWorkflow(client: Client, taskQueuePrefix: string, delivery: WebhookDeliveryInput): Promise<string> {
  const workflowId = webhookDeliveryWorkflowId(delivery.deliveryId, delivery.run);
  await startOnce(() =>
    client.workflow.start(webhookDeliveryWorkflow, {
      ...controlPlaneStart(taskQueuePrefix, delivery.workspaceId),
      workflowId,
      args: [delivery],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
  );
  return workflowId;
}

/**
 * The inbound-mail workflow of one accepted message, `inbound:<inboxMessageId>`. It runs on the control
 * queue rather than the default one that carries the send workflows, so a flood of mail to one inbox never
 * waits behind a campaign nor delays anyone's sends; at transactional priority, below the control plane's own
 * (domain checks and webhooks still go first); with the workspace as fairness key, so one workspace's flood
 * takes turns with other workspaces' mail. Its work is a parse and a few statements, as short as the control
 * plane's.
 */
export async function startInboundMailWorkflow(client: Client, taskQueuePrefix: string, message: { workspaceId: string; inboxMessageId: string }): Promise<string> {
  const workflowId = inboundMailWorkflowId(message.inboxMessageId);
  await startOnce(() =>
    client.workflow.start(inboundMailWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'control'),
      args: [{ workspaceId: message.workspaceId, inboxMessageId: message.inboxMessageId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.transactional, fairnessKey: message.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: message.workspaceId, Channel: 'email', Kind: 'inbound' }),
    }),
  );
  return workflowId;
}

/**
 * The bounce-mail workflow of one report mail that reached a VERP return path (`bounce:<digest>`), started
 * by the MX before it answers 250, so an accepted report is never lost (a failed start answers 451 and the
 * sender retries; its retry has the same digest, so it is one workflow). On the control queue at
 * transactional priority, like inbound mail: a bounce must suppress an address before the next send to it.
 */
export async function startBounceMailWorkflow(client: Client, taskQueuePrefix: string, input: BounceMailInput): Promise<string> {
  const workflowId = bounceMailWorkflowId(input.digest);
  await startOnce(() =>
    client.workflow.start(bounceMailWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'control'),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.transactional },
      typedSearchAttributes: searchAttributes({ Channel: 'email', Kind: 'bounce' }),
    }),
  );
  return workflowId;
}

/**
 * A campaign's workflow, `campaign:<campaignId>`, on the default queue (it only touches our database; its
 * messages reach the provider through the dispatcher), at campaign priority with the workspace as its
 * fairness key. A campaign is sent once, which the draft → scheduled move in the database decides; the id
 * may be reused after a start that failed and was reverted to draft, and a start that finds it running
 * (a retry) succeeded.
 */
export async function startCampaignWorkflow(
  client: Client,
  taskQueuePrefix: string,
  campaign: { workspaceId: string; campaignId: string; scheduledAt: Date | null; cursor?: number },
): Promise<void> {
  await startOnce(() =>
    client.workflow.start(campaignWorkflow, {
      workflowId: campaignWorkflowId(campaign.campaignId),
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId, scheduledAt: campaign.scheduledAt?.toISOString() ?? null, cursor: campaign.cursor }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.campaign, fairnessKey: campaign.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: campaign.workspaceId, CampaignId: campaign.campaignId, Kind: 'campaign' }),
    }),
  );
}

const CAMPAIGN_SIGNALS = { pause: pauseCampaignSignal, resume: resumeCampaignSignal, cancel: cancelCampaignSignal } as const;

/** Tells a campaign's workflow that the campaign changed (the database holds the change itself). */
export async function signalCampaign(client: Client, campaignId: string, signal: keyof typeof CAMPAIGN_SIGNALS): Promise<void> {
  await client.workflow.getHandle(campaignWorkflowId(campaignId)).signal(CAMPAIGN_SIGNALS[signal]);
}

/** An enrollment's journey, at journey priority with the workspace as fairness key. */
function journeyStart(taskQueuePrefix: string, enrollment: { workspaceId: string; enrollmentId: string; automationId: string; contactId: string }) {
  return {
    workflowId: enrollmentWorkflowId(enrollment.enrollmentId),
    taskQueue: taskQueueName(taskQueuePrefix, 'default'),
    args: [{ workspaceId: enrollment.workspaceId, enrollmentId: enrollment.enrollmentId }] as [{ workspaceId: string; enrollmentId: string }],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    priority: { priorityKey: TEMPORAL_PRIORITY.automation, fairnessKey: enrollment.workspaceId },
    typedSearchAttributes: searchAttributes({
      WorkspaceId: enrollment.workspaceId,
      AutomationId: enrollment.automationId,
      EnrollmentId: enrollment.enrollmentId,
      ContactId: enrollment.contactId,
      Kind: 'automation',
    }),
  };
}

/**
 * Starts the journey of an enrollment, `enrollment:<enrollmentId>`. With the event that triggered it, one
 * signalWithStart both starts it and hands it the event. A start that finds it running succeeded.
 */
export async function startEnrollmentWorkflow(
  client: Client,
  taskQueuePrefix: string,
  enrollment: { workspaceId: string; enrollmentId: string; automationId: string; contactId: string },
  triggerEvent?: JourneyEvent,
): Promise<void> {
  const options = journeyStart(taskQueuePrefix, enrollment);
  if (!triggerEvent) {
    await startOnce(() => client.workflow.start(journeyWorkflow, options));
    return;
  }
  await client.workflow.signalWithStart(journeyWorkflow, { ...options, signal: journeyEventSignal, signalArgs: [triggerEvent] });
}

/** Hands a running journey an event of its contact; a journey that already ended has nothing to do with it. */
export async function signalEnrollmentEvent(client: Client, enrollmentId: string, event: JourneyEvent): Promise<boolean> {
  return signalIfRunning(() => client.workflow.getHandle(enrollmentWorkflowId(enrollmentId)).signal(journeyEventSignal, event));
}

/** Asks a running journey to exit (POST /automations/:id/enrollments/:enrollmentId/exit, or an archive). */
export async function signalEnrollmentExit(client: Client, enrollmentId: string, reason: ExitRequestReason): Promise<boolean> {
  return signalIfRunning(() => client.workflow.getHandle(enrollmentWorkflowId(enrollmentId)).signal(exitEnrollmentSignal, { reason }));
}

async function signalIfRunning(signal: () => Promise<void>): Promise<boolean> {
  try {
    await signal();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * Journeys as services/journey-events.ts reaches them (its `JourneyControl`): starts, event signals, and
 * one deadline over a group of calls, so a request gives up on an unreachable Temporal in time.
 */
export function journeyControl(client: Client, taskQueuePrefix: string) {
  return {
    start: (enrollment: { workspaceId: string; enrollmentId: string; automationId: string; contactId: string }, triggerEvent?: JourneyEvent) =>
      startEnrollmentWorkflow(client, taskQueuePrefix, enrollment, triggerEvent),
    signal: (enrollmentId: string, event: JourneyEvent) => signalEnrollmentEvent(client, enrollmentId, event),
    within: <T>(timeoutMs: number, work: () => Promise<T>): Promise<T> => client.connection.withDeadline(Date.now() + timeoutMs, work),
  };
}

/** The workflow that enrolls a list's or segment's members (or up to 1,000 ids) in pages. */
export async function startAutomationEnrollWorkflow(client: Client, taskQueuePrefix: string, input: AutomationEnrollInput): Promise<void> {
  await startOnce(() =>
    client.workflow.start(automationEnrollWorkflow, {
      workflowId: automationEnrollWorkflowId(input.requestId),
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.automation, fairnessKey: input.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: input.workspaceId, AutomationId: input.automationId, Kind: 'automation' }),
    }),
  );
}

/**
 * The deployment-wide control-plane workflows that must always run; starting one that runs is a no-op.
 * Their ids carry the task-queue prefix, so deployments sharing one Temporal namespace do not share them.
 */
export async function startSingletons(client: Client, taskQueuePrefix: string, reconciler: MessageReconcilerInput): Promise<void> {
  const control = controlPlaneStart(taskQueuePrefix);
  await startOnce(() => client.workflow.start(usageRollupWorkflow, { ...control, workflowId: `${taskQueuePrefix}${USAGE_ROLLUP_WORKFLOW_ID}`, args: [{}] }));
  await startOnce(() => client.workflow.start(domainWatchdogWorkflow, { ...control, workflowId: `${taskQueuePrefix}${DOMAIN_WATCHDOG_WORKFLOW_ID}` }));
  await startOnce(() =>
    client.workflow.start(messageReconcilerWorkflow, { ...control, workflowId: `${taskQueuePrefix}${MESSAGE_RECONCILER_WORKFLOW_ID}`, args: [reconciler] }),
  );
  await startOnce(() => client.workflow.start(journeySweeperWorkflow, { ...control, workflowId: `${taskQueuePrefix}${JOURNEY_SWEEPER_WORKFLOW_ID}`, args: [{}] }));
}

/**
 * A conversion sync on the control plane's queue, fair between workspaces. A sync of the same source that
 * is already running is joined rather than started again (a double click gets the one sync's result); one
 * that has finished is run again (re-reading is free: conversions are recorded once by external id).
 */
export async function startAnalyticsSync(client: Client, taskQueuePrefix: string, request: AnalyticsSyncRequest) {
  return client.workflow.start(analyticsSyncWorkflow, {
    ...controlPlaneStart(taskQueuePrefix, request.workspaceId),
    workflowId: analyticsSyncWorkflowId(request.workspaceId, request.source),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [request],
  });
}

/**
 * A contact import's workflow, `import:<importId>`, on the control queue with the workspace as fairness key,
 * at the lowest priority there (below domain checks, webhooks and inbound mail, which are short and someone
 * waits for them): one workspace's million-row file takes turns with other workspaces' imports and never
 * waits behind, nor delays, anyone's sends.
 */
export async function startImportWorkflow(client: Client, taskQueuePrefix: string, job: { workspaceId: string; importId: string }): Promise<void> {
  await startOnce(() =>
    client.workflow.start(importWorkflow, {
      ...controlPlaneStart(taskQueuePrefix, job.workspaceId),
      priority: { priorityKey: TEMPORAL_PRIORITY.campaign, fairnessKey: job.workspaceId },
      workflowId: importWorkflowId(job.importId),
      args: [{ workspaceId: job.workspaceId, importId: job.importId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
  );
}

/** Tells an import's workflow that the job was canceled; a workflow already closed needs nothing. */
export async function signalImportCanceled(client: Client, importId: string): Promise<void> {
  try {
    await client.workflow.getHandle(importWorkflowId(importId)).signal(cancelImportSignal);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
