import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { enrollmentWorkflowId } from '../../core/ids';
import { createTestWorkspace } from '../helpers/workspaces';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { expectStatus, until } from '../helpers/polling';

// A journey through the public API on the whole stack: POST /automations and /activate, POST /events as the
// trigger and as the event a wait_for_event or the goal waits for, the journey workflow and its activities
// on the shipped workers, its messages through the dispatcher to an SMTP sink, and what the API then shows
// (enrollments, the contact's journey, the automation's active count).
jest.setTimeout(120_000);

let stack: EmailStack;
let client: Client;
beforeAll(async () => {
  // The test reads its state through the API as often as it likes: past the 10/s of one key.
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
  client = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await client.connection.close();
  await stack.close();
});

type Call = ReturnType<EmailStack['api']['as']>;

/** A workspace with a verified domain and a welcome, thanks and nudge template; returns its caller. */
async function workspace(): Promise<{ call: Call; templates: Record<'welcome' | 'thanks' | 'nudge', string>; domain: string }> {
  const { domain, call } = await createTestWorkspace(stack.api, { domain: { defaultFromName: 'Acme' } });
  // Message nodes without a `from` go from the verified domain's default sender.
  const [listed] = (await expectStatus(call('GET', '/domains'), 200)).domains as Array<{ id: string }>;
  await expectStatus(call('PATCH', `/domains/${listed.id}`, { defaultFromAddress: `hello@${domain}` }), 200);
  const template = async (name: string) =>
    (await expectStatus(call('POST', '/templates', { name, format: 'html', subject: `${name} {{ contact.firstName }}`, body: `<p>${name}, {{ contact.firstName }}</p>` }), 201)).id as string;
  return { call, domain, templates: { welcome: await template('Welcome'), thanks: await template('Thanks'), nudge: await template('Nudge') } };
}

/** Subjects the sink received for an address, in order. */
function subjectsTo(address: string): string[] {
  return stack.sink.received
    .filter((mail) => mail.recipients.includes(address))
    .map((mail) => /^Subject: (.*)$/m.exec(mail.raw)?.[1]?.trim() ?? '');
}

it('a signup event starts the journey; a purchase takes the wait_for_event branch, no purchase its timeout branch, an upgrade the goal', async () => {
  const { call, domain, templates } = await workspace();
  const created = await expectStatus(
    call('POST', '/automations', {
      name: 'Onboarding',
      trigger: { event: 'signed_up', match: { plan: 'trial' } },
      goal: { event: 'upgraded', match: {} },
      graph: {
        entry: 'welcome',
        nodes: [
          { id: 'welcome', type: 'message', preferredChannel: 'email', templateByChannel: { email: templates.welcome }, next: 'pause' },
          { id: 'pause', type: 'wait', duration: 1, next: 'purchase' },
          { id: 'purchase', type: 'wait_for_event', event: 'purchased', timeout: 'PT4S', onEvent: 'thanks', onTimeout: 'nudge' },
          { id: 'thanks', type: 'message', preferredChannel: 'email', templateByChannel: { email: templates.thanks }, from: `Shop <shop@${domain}>`, next: null },
          { id: 'nudge', type: 'message', preferredChannel: 'email', templateByChannel: { email: templates.nudge }, next: 'done' },
          { id: 'done', type: 'exit' },
        ],
      },
    }),
    201,
  );
  const automationId = created.id as string;
  expect(await expectStatus(call('POST', `/automations/${automationId}/activate`), 200)).toMatchObject({ status: 'active', version: 1 });

  const signUp = async (email: string, firstName: string) => {
    const contact = await expectStatus(call('POST', '/contacts', { attributes: { firstName }, identities: [{ channel: 'email', address: email, consent: 'opted_in' }] }), 201);
    const answer = await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: contact.id, properties: { plan: 'trial' } }), 202);
    expect(answer).toMatchObject({ triggered: 1, goalsCompleted: 0 });
    return contact.id as string;
  };
  const buyer = await signUp('buyer@example.org', 'Bea');
  const idle = await signUp('idle@example.org', 'Ida');
  const upgrader = await signUp('upgrader@example.org', 'Uma');

  // Each is at the wait_for_event once its welcome went and its second passed.
  const enrollments = async () => (await expectStatus(call('GET', `/automations/${automationId}/enrollments`), 200)).data as Array<Record<string, string>>;
  await until('all three waiting for a purchase', enrollments, (rows) => rows.length === 3 && rows.every((row) => row.currentNodeId === 'purchase'));
  expect(await expectStatus(call('POST', '/events', { event: 'purchased', contactId: buyer }), 202)).toMatchObject({ triggered: 0, goalsCompleted: 0 });
  expect(await expectStatus(call('POST', '/events', { event: 'upgraded', contactId: upgrader }), 202)).toMatchObject({ goalsCompleted: 1 });

  const ended = await until('all three ended', enrollments, (rows) => rows.every((row) => row.status !== 'active'));
  const byContact = Object.fromEntries(ended.map((row) => [row.contactId, row]));
  expect(byContact[buyer]).toMatchObject({ status: 'completed', exitReason: 'completed', currentNodeId: 'thanks' });
  expect(byContact[idle]).toMatchObject({ status: 'completed', exitReason: 'exit_node' });
  expect(byContact[upgrader]).toMatchObject({ status: 'exited', exitReason: 'goal_reached' });

  await until('the last messages sent', async () => subjectsTo('buyer@example.org').length + subjectsTo('idle@example.org').length, (count) => count === 4);
  // Accepted in journey order, delivered in any: a send the shared pacer throttles retries a second later.
  expect(subjectsTo('buyer@example.org').sort()).toEqual(['Thanks Bea', 'Welcome Bea']);
  expect(subjectsTo('idle@example.org').sort()).toEqual(['Nudge Ida', 'Welcome Ida']);
  expect(subjectsTo('upgrader@example.org')).toEqual(['Welcome Uma']);
  // The node's own sender, else the verified domain's default one.
  const fromOf = (address: string, subject: string) =>
    stack.sink.received.find((mail) => mail.recipients.includes(address) && mail.raw.includes(`Subject: ${subject}`))?.raw.match(/^From: (.*)$/m)?.[1]?.trim();
  expect(fromOf('buyer@example.org', 'Thanks Bea')).toBe(`Shop <shop@${domain}>`);
  expect(fromOf('idle@example.org', 'Welcome Ida')).toBe(`Acme <hello@${domain}>`);

  const summary = await expectStatus(call('GET', `/automations/${automationId}`), 200);
  expect(summary).toMatchObject({ activeEnrollments: 0, version: 1 });
  const journey = (await expectStatus(call('GET', `/contacts/${upgrader}/journey`), 200)).data as Array<Record<string, unknown>>;
  expect(journey).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ type: 'enrollment', phase: 'entered', automationId }),
      expect.objectContaining({ type: 'enrollment', phase: 'exited', automationId, exitReason: 'goal_reached' }),
      expect.objectContaining({ type: 'message_sent', kind: 'automation', automationId }),
    ]),
  );
});

it('a new version leaves a running enrollment on its own; an exit through the API ends it at once', async () => {
  const { call, templates } = await workspace();
  const graph = (template: string) => ({
    entry: 'hold',
    nodes: [
      { id: 'hold', type: 'wait', duration: 'P7D', next: 'hello' },
      { id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: template }, next: null },
    ],
  });
  const automationId = (await expectStatus(call('POST', '/automations', { name: 'Versions', trigger: { event: 'joined', match: {} }, graph: graph(templates.welcome) }), 201)).id as string;
  await expectStatus(call('POST', `/automations/${automationId}/activate`), 200);
  const contact = await expectStatus(call('POST', '/contacts', { identities: [{ channel: 'email', address: 'versions@example.org', consent: 'opted_in' }] }), 201);
  await expectStatus(call('POST', '/events', { event: 'joined', contactId: contact.id }), 202);
  const [first] = await until(
    'the enrollment waiting',
    async () => (await expectStatus(call('GET', `/automations/${automationId}/enrollments`), 200)).data as Array<Record<string, unknown>>,
    (rows) => rows[0]?.currentNodeId === 'hold',
  );

  await expectStatus(call('PATCH', `/automations/${automationId}`, { graph: graph(templates.nudge) }), 200);
  expect(await expectStatus(call('POST', `/automations/${automationId}/activate`), 200)).toMatchObject({ version: 2 });
  const listed = (await expectStatus(call('GET', `/automations/${automationId}/enrollments`), 200)).data as Array<Record<string, unknown>>;
  expect(listed).toEqual([expect.objectContaining({ id: first.id, version: 1, status: 'active' })]);

  expect(await expectStatus(call('POST', `/automations/${automationId}/enrollments/${first.id as string}/exit`), 200)).toMatchObject({ status: 'exited', exitReason: 'manual' });
  const end = await client.workflow.getHandle(enrollmentWorkflowId(first.id as string)).result();
  expect(end).toMatchObject({ status: 'exited' });
  expect(subjectsTo('versions@example.org')).toEqual([]);
});
