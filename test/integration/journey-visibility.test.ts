import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { enrollmentWorkflowId } from '../../core/ids';
import { createTestWorkspace } from '../helpers/workspaces';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { expectStatus, until } from '../helpers/polling';

// What a journey shows and what it keeps out of Temporal, on the whole stack (the API, the shipped
// workers, Postgres, Temporal): a message step skipped at run time is shown with its reason where a user
// looks (the contact's journey, the enrollment list, the automation's stats), and an event's properties
// never enter a journey's Temporal history, which anyone with the Temporal UI reads.
jest.setTimeout(120_000);

let stack: EmailStack;
let client: Client;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
  client = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await client.connection.close();
  await stack.close();
});

type Call = ReturnType<EmailStack['api']['as']>;

/** A workspace with a verified domain, its default sender and one email template; returns its caller. */
async function workspace(): Promise<{ call: Call; template: string }> {
  const { domain, call } = await createTestWorkspace(stack.api, { domain: { defaultFromName: 'Acme' } });
  const [listed] = (await expectStatus(call('GET', '/domains'), 200)).domains as Array<{ id: string }>;
  await expectStatus(call('PATCH', `/domains/${listed.id}`, { defaultFromAddress: `hello@${domain}` }), 200);
  const template = (await expectStatus(call('POST', '/templates', { name: 'Welcome', format: 'html', subject: 'Welcome', body: '<p>Welcome</p>' }), 201)).id as string;
  return { call, template };
}

async function activeAutomation(call: Call, body: Record<string, unknown>): Promise<string> {
  const automationId = (await expectStatus(call('POST', '/automations', body), 201)).id as string;
  await expectStatus(call('POST', `/automations/${automationId}/activate`), 200);
  return automationId;
}

/**
 * A workflow's whole history as text, every payload decoded: a signal's or an activity's arguments are
 * JSON in bytes, which the JSON form of the history shows base64-encoded (`data`).
 */
async function historyText(workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return JSON.stringify(history, (key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (key === 'data' && typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
    return value;
  });
}

it('a suppressed contact\'s message step is skipped, and its reason shows in the contact\'s journey, the enrollment list and the per-node stats', async () => {
  const { call, template } = await workspace();
  const automationId = await activeAutomation(call, {
    name: 'Welcome',
    trigger: { event: 'signed_up', match: {} },
    graph: {
      entry: 'welcome',
      nodes: [{ id: 'welcome', type: 'message', label: 'Welcome mail', preferredChannel: 'email', templateByChannel: { email: template }, next: null }],
    },
  });
  const contact = await expectStatus(call('POST', '/contacts', { identities: [{ channel: 'email', address: 'gone@example.org', consent: 'opted_in' }] }), 201);
  await expectStatus(call('POST', '/suppressions', { address: 'gone@example.org' }), 201);
  await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: contact.id }), 202);

  const enrollments = async () => (await expectStatus(call('GET', `/automations/${automationId}/enrollments`), 200)).data as Array<Record<string, unknown>>;
  const [ended] = await until('the enrollment ended', enrollments, (rows) => rows.length === 1 && rows[0].status !== 'active');
  expect(ended).toMatchObject({ status: 'completed', skippedSteps: [{ nodeId: 'welcome', nodeLabel: 'Welcome mail', reason: 'suppressed', at: expect.any(String) }] });

  const journey = (await expectStatus(call('GET', `/contacts/${contact.id as string}/journey`), 200)).data as Array<Record<string, unknown>>;
  expect(journey).toContainEqual(
    expect.objectContaining({ type: 'note', kind: 'automation', status: 'skipped', skipReason: 'suppressed', automationId, automationName: 'Welcome', nodeId: 'welcome', nodeType: 'message', nodeLabel: 'Welcome mail' }),
  );
  expect(journey.filter((entry) => entry.type === 'message_sent')).toEqual([]);

  expect(await expectStatus(call('GET', `/automations/${automationId}/stats`), 200)).toEqual({
    automationId,
    nodes: [{ nodeId: 'welcome', nodeType: 'message', label: 'Welcome mail', skipped: 1, skippedByReason: { suppressed: 1 } }],
  });
});

it('the Temporal history of an event-triggered journey holds the events\' ids, never their properties', async () => {
  const { call } = await workspace();
  const automationId = await activeAutomation(call, {
    name: 'Onboarding',
    trigger: { event: 'signed_up', match: { plan: 'trial' } },
    goal: { event: 'upgraded', match: { tier: 'gold' } },
    graph: {
      entry: 'purchase',
      nodes: [
        { id: 'purchase', type: 'wait_for_event', event: 'purchased', match: { sku: 'book' }, timeout: 'P1D', onEvent: 'thanks', onTimeout: null },
        { id: 'thanks', type: 'wait', duration: 'P1D', next: null },
      ],
    },
  });
  const contact = await expectStatus(call('POST', '/contacts', { identities: [{ channel: 'email', address: 'private@example.org', consent: 'opted_in' }] }), 201);
  const secrets = { trigger: `card-${randomUUID()}`, wait: `address-${randomUUID()}`, goal: `token-${randomUUID()}` };
  const trigger = await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: contact.id, properties: { plan: 'trial', cardLast4: secrets.trigger } }), 202);

  const enrollment = async () => ((await expectStatus(call('GET', `/automations/${automationId}/enrollments`), 200)).data as Array<Record<string, unknown>>)[0];
  await until('the journey waiting for a purchase', enrollment, (row) => row?.currentNodeId === 'purchase');
  await expectStatus(call('POST', '/events', { event: 'purchased', contactId: contact.id, properties: { sku: 'book', shipTo: secrets.wait } }), 202);
  await until('the purchase taken', enrollment, (row) => row.currentNodeId === 'thanks');
  expect(await expectStatus(call('POST', '/events', { event: 'upgraded', contactId: contact.id, properties: { tier: 'gold', token: secrets.goal } }), 202)).toMatchObject({ goalsCompleted: 1 });
  const ended = await until('the goal reached', enrollment, (row) => row.status !== 'active');
  expect(ended).toMatchObject({ status: 'exited', exitReason: 'goal_reached' });

  const text = await historyText(enrollmentWorkflowId(ended.id as string));
  // The decoding works: the trigger's id is in the history, as the signal that started the journey.
  expect(text).toContain(trigger.id as string);
  for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
  expect(text).not.toContain('cardLast4');
});
