import { Client, type Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { sendWorkflowId } from '../../core/ids';
import { taskQueueName } from '../../core/task-queues';
import { markDispatched } from '../../db/repositories/message-outbox';
import { sendEmailWorkflow } from '../../workflows/send-email';

export interface SendDispatcher {
  /** Starts the send workflow of accepted messages; never throws (the outbox catches what it misses). */
  dispatch(messages: ReadonlyArray<{ workspaceId: string; messageId: string }>): Promise<void>;
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
 * The message row is the point of acceptance. Starting its workflow is an optimisation of latency:
 * if Temporal is slow or down, the row stays undispatched and the worker's outbox loop starts it later.
 */
export function createSendDispatcher(options: DispatcherOptions): SendDispatcher {
  const client = new Client({ connection: options.temporal, namespace: options.namespace });
  const startOne = async (workspaceId: string, messageId: string): Promise<string | null> => {
    try {
      await startSendWorkflow(client, options.taskQueuePrefix, { workspaceId, messageId });
      return messageId;
    } catch (error) {
      options.logger.debug({ err: error, messageId }, 'send workflow not started; the outbox will');
      return null;
    }
  };
  return {
    async dispatch(messages) {
      if (options.mode === 'outbox' || messages.length === 0) return;
      const started = await options.temporal.withDeadline(Date.now() + options.timeoutMs, () =>
        Promise.all(messages.map((message) => startOne(message.workspaceId, message.messageId))),
      );
      await markDispatched(options.db, started.filter((id): id is string => id !== null)).catch((err: unknown) => {
        options.logger.warn({ err }, 'could not mark messages dispatched; the outbox will re-start them harmlessly');
      });
    },
  };
}
