import { Client, type Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { createGroupBatcher } from '../../core/group-batcher';
import { sendWorkflowId } from '../../core/ids';
import { taskQueueName } from '../../core/task-queues';
import { markDispatched } from '../../db/repositories/message-outbox';
import { sendEmailWorkflow } from '../../workflows/send-email';

export interface SendDispatcher {
  /**
   * Starts the send workflows of accepted messages in the background and returns at once; never throws
   * (what it does not start, the outbox does).
   */
  dispatch(messages: ReadonlyArray<{ workspaceId: string; messageId: string }>): void;
}

export interface DispatcherOptions {
  db: Sequelize;
  temporal: Connection;
  namespace: string;
  taskQueuePrefix: string;
  /** `inline`: start right after the commit, bounded by `timeoutMs`; `outbox`: leave it to the dispatcher loop. */
  mode: 'inline' | 'outbox';
  timeoutMs: number;
  logger: Logger;
}

/**
 * Starts the send workflow of one message; true when it runs (now or already). The id is built from the
 * message id with REJECT_DUPLICATE, so the API's start and the outbox's can never run a message twice.
 */
export async function startSendWorkflow(
  client: Client,
  taskQueuePrefix: string,
  message: { workspaceId: string; messageId: string },
): Promise<boolean> {
  try {
    await client.workflow.start(sendEmailWorkflow, {
      workflowId: sendWorkflowId(message.messageId),
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ ...message, sendsTaskQueue: taskQueueName(taskQueuePrefix, 'sends') }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return true;
  } catch (error) {
    // Started before (a retry, or the outbox got there first): that is success.
    if (error instanceof WorkflowExecutionAlreadyStartedError) return true;
    throw error;
  }
}

/**
 * At most this many starts wait on Temporal at once in one API process. Past this the outbox is the faster
 * path (it starts in bulk, from the worker), so further messages are left to it rather than queued here.
 */
const MAX_STARTS_IN_FLIGHT = 256;

/**
 * The message row is the point of acceptance, so the answer never waits for the start. Starting the
 * workflow here is an optimisation of latency: if Temporal is slow or down, the row stays undispatched
 * and the worker's outbox loop starts it later.
 */
export function createSendDispatcher(options: DispatcherOptions): SendDispatcher {
  const client = new Client({ connection: options.temporal, namespace: options.namespace });
  let inFlight = 0;
  // Marks of starts that finish together share one UPDATE.
  const marks = createGroupBatcher<string, void>(
    async (_group, messageIds) => {
      await markDispatched(options.db, messageIds);
      return [];
    },
    { maxBatch: 1_000, maxInFlight: 1 },
  );
  const startOne = async (message: { workspaceId: string; messageId: string }) => {
    try {
      await options.temporal.withDeadline(Date.now() + options.timeoutMs, () => startSendWorkflow(client, options.taskQueuePrefix, message));
    } catch (error) {
      options.logger.debug({ err: error, messageId: message.messageId }, 'send workflow not started; the outbox will');
      return;
    } finally {
      inFlight -= 1;
    }
    await marks.submit('dispatched', message.messageId).catch((err: unknown) => {
      options.logger.warn({ err }, 'could not mark a message dispatched; the outbox will re-start it harmlessly');
    });
  };
  return {
    dispatch(messages) {
      if (options.mode === 'outbox') return;
      for (const message of messages) {
        if (inFlight >= MAX_STARTS_IN_FLIGHT) return;
        inFlight += 1;
        void startOne(message);
      }
    },
  };
}
