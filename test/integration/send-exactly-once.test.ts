import { connectTemporal } from '../../temporal/connection';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { QueryTypes } from 'sequelize';
import { createActivities } from '../../activities';
import { sendWorkflowId } from '../../core/ids';
import { claimFairly, markDispatched } from '../../db/repositories/dispatch-queue';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { temporalPorts } from '../../temporal/activity-ports';
import { lazyTemporalClient } from '../../temporal/connection';

// One provider call per message. The stack's database is this file's own: it installs a fault-injecting
// trigger.
let stack: EmailStack;
/** Slows every delivery's preparation (attachment loading) by this many ms while set. */
let preparationDelayMs = 0;
beforeAll(async () => {
  stack = await startEmailStack({
    activities: {
      email: {
        loadAttachments: async () => {
          await new Promise((resolve) => setTimeout(resolve, preparationDelayMs));
          return { attachments: [], missing: [] };
        },
      },
    },
  });
  // Fails the first recording of a provider id of a message to fail-record@example.org. A sequence, not a
  // table, counts the tries: nextval survives the rollback of the failing transaction.
  await stack.api.db.query(`
    CREATE SEQUENCE record_fault_tries;
    CREATE FUNCTION record_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF 'fail-record@example.org' = ANY(NEW.to_addresses) AND nextval('record_fault_tries') = 1 THEN
        RAISE EXCEPTION 'injected: the database went away while recording the send' USING ERRCODE = '57P01';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER record_fault BEFORE UPDATE OF provider_message_id ON messages
      FOR EACH ROW WHEN (NEW.provider_message_id IS NOT NULL AND OLD.provider_message_id IS NULL) EXECUTE FUNCTION record_fault();
  `);
});
afterAll(() => stack.close());

jest.setTimeout(120_000);

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { domain: true });
  const { domain } = workspace;
  const send = async (to: string) => {
    const response = await stack.api.as(workspace.apiKey)('POST', '/emails', { from: `a@${domain}`, to, subject: 'Once', text: 'T', idempotencyKey: `once-${to}` });
    expect(response.status).toBe(202);
    return (response.body as { id: string }).id;
  };
  return { ...workspace, send };
}

const receivedBy = (address: string) => stack.sink.received.filter((mail) => mail.recipients.includes(address));

async function eventTypes(messageId: string): Promise<string[]> {
  const rows = await stack.api.db.query<{ type: string }>('SELECT type FROM message_events WHERE message_id = $1 ORDER BY created_at', {
    bind: [messageId],
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => row.type);
}

describe('one provider call per message', () => {
  it('a delivery whose preparation outlasts the heartbeat timeout (10 s) reaches the provider once', async () => {
    const { workspaceId, send } = await sender();
    preparationDelayMs = 21_000;
    try {
      const id = await send('slow-prep@example.org');
      expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 90_000)).toBe('sent');
      // The workflow ends with its last attempt: had a second one started beside the first, it would have
      // finished its own preparation and called the provider by then.
      const temporal = await connectTemporal(stack.api.config);
      try {
        expect(await temporal.workflow.getHandle(sendWorkflowId(id)).result()).toBe('sent');
      } finally {
        await temporal.connection.close();
      }
      // A timed-out attempt may still run after the workflow ended: stopping the worker waits for it.
      await stack.stopWorkers();
      await stack.startWorkers();
    } finally {
      preparationDelayMs = 0;
    }
    expect(receivedBy('slow-prep@example.org')).toHaveLength(1);
  });

  it('a send whose recording fails once after the provider accepted reaches the provider once and ends sent', async () => {
    const { workspaceId, send } = await sender();
    const id = await send('fail-record@example.org');
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    const tries = await stack.api.db.query<{ last_value: string }>('SELECT last_value FROM record_fault_tries', { type: QueryTypes.SELECT });
    expect(Number(tries[0].last_value)).toBeGreaterThanOrEqual(2);
    expect(receivedBy('fail-record@example.org')).toHaveLength(1);
    expect(await eventTypes(id)).toEqual(['sent']);
  });

  it('two attempts at once: one sends, the other stands down; an attempt that died holding its claim is counted', async () => {
    const { workspaceId, send } = await sender();
    await stack.stopWorkers();
    try {
      const id = await send('twice@example.org');
      const metrics = new Registry();
      const activities = createActivities({ db: stack.api.db, config: stack.api.config, temporal: temporalPorts(lazyTemporalClient(stack.api.config), stack.api.config.TASK_QUEUE_PREFIX), logger: pino({ level: 'silent' }), metrics });
      // The overtaken attempt fails on purpose: the SDK's warning of it would only be noise in the output.
      const attempts = await Promise.allSettled([1, 2].map(() => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(activities.deliverMessage, workspaceId, id)));
      const fulfilled = attempts.filter((attempt) => attempt.status === 'fulfilled');
      const refused = attempts.flatMap((attempt) => (attempt.status === 'rejected' ? [attempt.reason as { type?: string }] : []));
      // Either the second found the claim held, or it came after the first had recorded the send.
      expect(fulfilled.length + refused.filter((reason) => reason.type === 'DeliveryInFlight').length).toBe(2);
      expect(receivedBy('twice@example.org')).toHaveLength(1);

      const lost = await send('lost-claim@example.org');
      // An attempt claimed and died before any answer: its lease has run out, no provider id was recorded.
      await stack.api.db.query(
        `UPDATE messages SET status = 'sending', delivery_claim = gen_random_uuid(), delivery_claimed_until = now() - interval '1 second' WHERE id = $1`,
        { bind: [lost] },
      );
      expect(await new MockActivityEnvironment().run(activities.deliverMessage, workspaceId, lost)).toBe('sent');
      expect(receivedBy('lost-claim@example.org')).toHaveLength(1);
      expect((await metrics.getSingleMetric('messaging_delivery_outcome_unknown_total')?.get())?.values[0].value).toBe(1);
    } finally {
      await stack.startWorkers();
    }
  });
});

describe('the dispatcher', () => {
  it('holds no row lock while it waits on Temporal, and a row it claimed is not taken by another', async () => {
    const { send } = await sender();
    await stack.stopDispatcher();
    try {
      const ids = [await send('outbox-a@example.org'), await send('outbox-b@example.org')];
      const claim = () => claimFairly(stack.api.db, { channel: 'email', dispatchClass: 'transactional', bound: 100, leaseMs: 30_000 });
      const claimed = (await claim()).map((message) => message.messageId);
      expect(claimed).toEqual(expect.arrayContaining(ids));
      // As the dispatcher would while its workflow starts wait on Temporal: nothing is locked, nothing re-taken.
      for (const id of ids) {
        await stack.api.db.query('SELECT id FROM messages WHERE id = $1 FOR UPDATE NOWAIT', { bind: [id] });
      }
      expect(await claim()).toEqual([]);
      await markDispatched(stack.api.db, ids.map((messageId) => ({ messageId, workflowId: `send:${messageId}`, round: 0 })));
      const undispatched = await stack.api.db.query('SELECT id FROM messages WHERE id = ANY($1::uuid[]) AND dispatched_at IS NULL', { bind: [ids], type: QueryTypes.SELECT });
      expect(undispatched).toEqual([]);
    } finally {
      stack.startDispatcher();
    }
  });
});
