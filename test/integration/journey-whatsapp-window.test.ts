import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { type ChatStack, startChatStack } from '../helpers/chat-stack';
import { connectTwilio, customerWrites, newCustomerNumber } from '../helpers/chat-workspaces';
import { expectStatus, until } from '../helpers/polling';
import { createTestWorkspace } from '../helpers/workspaces';

// WhatsApp's 24-hour window for journey messages (issue 32), decided when the journey queues the message, as
// POST /messages decides it for its own sends: a contact who has not written within 24 hours gets the step's
// content template (contentSid), or, with free-form content only, is passed over for the next channel or the
// step is skipped `outside_whatsapp_window`, shown in the automation's stats and the contact's journey.
// The whole stack: POST /events, the journey on the Temporal dev server, the dispatcher, the Twilio stand-in.
jest.setTimeout(120_000);

let chat: ChatStack;
beforeAll(async () => {
  chat = await startChatStack();
});
afterAll(() => chat.close());

const CONTENT_SID = `HX${'0123456789abcdef'.repeat(2)}`;

/** A workspace with its Twilio account, a WhatsApp template, and a call that enrolls a new WhatsApp contact by an event. */
async function workspace() {
  const { api } = chat.stack;
  const { workspaceId, apiKey, call } = await createTestWorkspace(api, { plan: 'pro' });
  const { authToken } = await connectTwilio(api, chat.twilio, apiKey);
  const template = (await expectStatus(
    call('POST', '/templates', { name: `t-${randomUUID()}`, format: 'html', channels: ['whatsapp'], body: '<p>Hi {{ contact.firstName }}</p>', channelText: { whatsapp: 'Hi {{ contact.firstName }}, welcome!' } }),
    201,
  )).id as string;
  const automation = async (event: string, node: Record<string, unknown>) => {
    const created = await expectStatus(call('POST', '/automations', {
      name: `On ${event}`,
      trigger: { event },
      graph: { entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'whatsapp', templateByChannel: { whatsapp: template }, ...node, next: null }] },
    }), 201);
    return { id: created.id as string, activation: await expectStatus(call('POST', `/automations/${created.id as string}/activate`), 200) };
  };
  const contact = async (options: { wrote: boolean }) => {
    const phone = newCustomerNumber();
    const created = await expectStatus(call('POST', '/contacts', {
      attributes: { firstName: 'Ann' },
      identities: [{ channel: 'whatsapp', address: phone, consent: 'opted_in', verified: true, isPrimary: true }],
    }), 201);
    if (options.wrote) await customerWrites(api, chat.twilio, workspaceId, authToken, phone);
    return { id: created.id as string, phone };
  };
  const sendsTo = (phone: string) => chat.twilio.sends().filter((request) => request.params.To === `whatsapp:${phone}`);
  const journeyOf = async (contactId: string) => (await expectStatus(call('GET', `/contacts/${contactId}/journey`), 200)).data as Array<Record<string, unknown>>;
  return { call, automation, contact, sendsTo, journeyOf };
}

it("outside the window the step's content template goes; inside it the template's text", async () => {
  const { call, automation, contact, sendsTo } = await workspace();
  const { activation } = await automation('signed_up', { contentSid: CONTENT_SID, contentVariables: { 1: '{{ contact.firstName }}', 2: 'team' } });
  expect(activation).toMatchObject({ status: 'active', version: 1, warnings: [] });

  const silent = await contact({ wrote: false });
  const talking = await contact({ wrote: true });
  for (const who of [silent, talking]) await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: who.id }), 202);

  const [template] = await until('the content template reaches Twilio', () => Promise.resolve(sendsTo(silent.phone)), (sends) => sends.length > 0, 60_000);
  expect(template.params).toMatchObject({ ContentSid: CONTENT_SID, ContentVariables: JSON.stringify({ 1: 'Ann', 2: 'team' }) });
  expect(template.params.Body).toBeUndefined();
  const [text] = await until('the free-form text reaches Twilio', () => Promise.resolve(sendsTo(talking.phone)), (sends) => sends.length > 0, 60_000);
  expect(text.params).toMatchObject({ Body: 'Hi Ann, welcome!' });
  expect(text.params.ContentSid).toBeUndefined();
});

it('free-form only: activation warns naming contentSid; a contact outside the window is skipped outside_whatsapp_window, shown in the stats and the journey', async () => {
  const { call, automation, contact, sendsTo, journeyOf } = await workspace();
  const { id, activation } = await automation('joined', {});
  expect(activation).toMatchObject({ status: 'active', warnings: [{ path: 'graph.nodes[0].contentSid', message: expect.stringContaining('24 hours') }] });

  const silent = await contact({ wrote: false });
  const talking = await contact({ wrote: true });
  for (const who of [silent, talking]) await expectStatus(call('POST', '/events', { event: 'joined', contactId: who.id }), 202);

  await until('the free-form text reaches the contact who wrote', () => Promise.resolve(sendsTo(talking.phone)), (sends) => sends.length > 0, 60_000);
  const stats = await until(
    'the skip is counted',
    () => expectStatus(call('GET', `/automations/${id}/stats`), 200),
    (body) => ((body.nodes as Array<{ skipped: number }>)[0]?.skipped ?? 0) > 0,
    60_000,
  );
  expect(stats.nodes).toEqual([expect.objectContaining({ nodeId: 'hello', skipped: 1, skippedByReason: { outside_whatsapp_window: 1 } })]);
  expect(await journeyOf(silent.id)).toEqual(expect.arrayContaining([expect.objectContaining({ status: 'skipped', skipReason: 'outside_whatsapp_window', nodeId: 'hello' })]));
  expect(sendsTo(silent.phone)).toEqual([]);
});

it('free-form WhatsApp with an email fallback: a contact outside the window gets the email instead', async () => {
  const { api } = chat.stack;
  const { workspaceId, domain, apiKey, call } = await createTestWorkspace(api, { plan: 'pro', domain: true });
  await connectTwilio(api, chat.twilio, apiKey);
  const [listed] = (await expectStatus(call('GET', '/domains'), 200)).domains as Array<{ id: string }>;
  await expectStatus(call('PATCH', `/domains/${listed.id}`, { defaultFromAddress: `hello@${domain}` }), 200);
  const template = (await expectStatus(
    call('POST', '/templates', { name: `t-${randomUUID()}`, format: 'html', channels: ['email', 'whatsapp'], subject: 'Welcome', body: '<p>Hi {{ contact.firstName }}</p>' }),
    201,
  )).id as string;
  const created = await expectStatus(call('POST', '/automations', {
    name: 'Fallback',
    trigger: { event: 'joined' },
    graph: { entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'whatsapp', fallbackChain: ['email'], templateByChannel: { whatsapp: template, email: template }, next: null }] },
  }), 201);
  await expectStatus(call('POST', `/automations/${created.id as string}/activate`), 200);
  const phone = newCustomerNumber();
  const person = await expectStatus(call('POST', '/contacts', {
    attributes: { firstName: 'Bo' },
    identities: [
      { channel: 'whatsapp', address: phone, consent: 'opted_in', verified: true, isPrimary: true },
      { channel: 'email', address: `bo-${randomUUID()}@example.org`, consent: 'opted_in', isPrimary: true },
    ],
  }), 201);
  await expectStatus(call('POST', '/events', { event: 'joined', contactId: person.id }), 202);
  const rows = await until(
    'the journey message is queued',
    () => api.db.query<{ channel: string }>('SELECT channel FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT }),
    (found) => found.length > 0,
    60_000,
  );
  expect(rows.map((row) => row.channel)).toEqual(['email']);
  expect(chat.twilio.sends().filter((request) => request.params.To === `whatsapp:${phone}`)).toEqual([]);
});
