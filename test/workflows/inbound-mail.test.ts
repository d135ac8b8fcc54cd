import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { InboundMailInput, ProcessOutcome } from '../../activities/inbox-mail';
import { inboundMailWorkflow } from '../../workflows';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

jest.setTimeout(120_000);

/**
 * The inbound-mail workflow against scripted activities typed as the real ones: what it asks for, in which
 * order, and what it does when our database fails under it.
 */
describe('inbound mail workflow', () => {
  let env: TimeSkippingEnv;

  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(async () => {
    await env.close();
  });

  /** Runs the workflow for one message with these answers of `processInboundMail` (one per attempt, the last repeating). */
  async function run(answers: Array<ProcessOutcome | Error>) {
    const calls: string[] = [];
    const activities = {
      processInboundMail: async (input: InboundMailInput): Promise<ProcessOutcome> => {
        calls.push(`process:${input.inboxMessageId}`);
        const answer = answers.length > 1 ? answers.shift() : answers[0];
        if (answer instanceof Error) throw answer;
        return answer as ProcessOutcome;
      },
      matchInboundContactEvent: async (input: InboundMailInput) => {
        calls.push(`match:${input.inboxMessageId}`);
        return { matched: true };
      },
    } satisfies Pick<Activities, 'processInboundMail' | 'matchInboundContactEvent'>;
    const input = { workspaceId: randomUUID(), inboxMessageId: randomUUID() };
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: env.taskQueue, workflowBundle: await workflowBundle(), activities });
    const result = await worker.runUntil(
      env.workflowClient.execute(inboundMailWorkflow, { taskQueue: env.taskQueue, workflowId: `inbound:${input.inboxMessageId}`, args: [input] }),
    );
    return { result, calls: calls.map((call) => call.replace(input.inboxMessageId, 'id')) };
  }

  it('a known contact\'s reply is processed, then its stored email.replied event is handed to journeys', async () => {
    const { result, calls } = await run([{ status: 'processed', threadId: 't1', contactEvent: 'email.replied' }]);
    expect(result).toEqual({ status: 'processed', threadId: 't1', contactEvent: 'email.replied' });
    expect(calls).toEqual(['process:id', 'match:id']);
  });

  it('mail from a sender who is no contact is processed and tells no journey', async () => {
    const { calls } = await run([{ status: 'processed', threadId: 't2', contactEvent: null }]);
    expect(calls).toEqual(['process:id']);
  });

  it('a message whose inbox was deleted before processing ends the workflow quietly', async () => {
    const { result, calls } = await run([{ status: 'missing' }]);
    expect(result).toEqual({ status: 'missing' });
    expect(calls).toEqual(['process:id']);
  });

  it('our database failing twice is retried until processing succeeds, and journeys hear of it once', async () => {
    const { result, calls } = await run([new Error('connection refused'), new Error('connection refused'), { status: 'processed', threadId: 't3', contactEvent: 'email.received' }]);
    expect(result).toMatchObject({ status: 'processed', threadId: 't3' });
    expect(calls).toEqual(['process:id', 'process:id', 'process:id', 'match:id']);
  });

  it('a retry that finds the message already processed still hands its stored contact event to journeys', async () => {
    const { calls } = await run([{ status: 'already_processed', threadId: 't4', contactEvent: 'email.replied' }]);
    expect(calls).toEqual(['process:id', 'match:id']);
  });
});
