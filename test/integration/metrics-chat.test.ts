import { QueryTypes } from 'sequelize';
import { type ChatStack, PUBLIC_BASE_URL, startChatStack } from '../helpers/chat-stack';
import { customerWrites, newCustomerNumber, queueChatMessage } from '../helpers/chat-workspaces';
import { sampleOf, scrape } from '../helpers/metrics-scrape';
import { createTestWorkspace } from '../helpers/workspaces';

jest.setTimeout(120_000);

// A WhatsApp send through the real twilio client to the stand-in, and Twilio's signed status callbacks to the
// API. Worker and API share this process, so the API's /metrics shows both the send and the callback.
let chat: ChatStack;
beforeAll(async () => {
  chat = await startChatStack({ OPS_TOKEN: '' });
});
afterAll(() => chat?.close());

describe('metrics of WhatsApp sends', () => {
  it('a sent message counts sent and a timed ok call for twilio; its delivered status counts once, repeated or not, and an undelivered one counts failed', async () => {
    const { stack, twilio } = chat;
    const workspace = await createTestWorkspace(stack, { whatsapp: twilio });
    const { authToken } = workspace.twilio;
    const whatsapp = (labels: Record<string, string>) => ({ provider: 'twilio', channel: 'whatsapp', ...labels });
    const read = async () => {
      const text = await scrape(stack.api.url);
      return {
        sent: sampleOf(text, 'messaging_sends_total', whatsapp({ status: 'sent' })),
        delivered: sampleOf(text, 'messaging_sends_total', whatsapp({ status: 'delivered' })),
        failed: sampleOf(text, 'messaging_sends_total', whatsapp({ status: 'failed' })),
        calls: sampleOf(text, 'messaging_provider_call_duration_seconds_count', whatsapp({ result: 'ok' })),
      };
    };
    const before = await read();

    const sendOne = async () => {
      const customer = newCustomerNumber();
      await customerWrites(stack.api, twilio, workspace.workspaceId, authToken, customer);
      const id = await queueChatMessage(stack.api.db, workspace.workspaceId, { channel: 'whatsapp', to: customer, content: { text: 'Shipped' } });
      expect(await stack.waitForStatus(workspace.workspaceId, id, ['sent', 'failed'])).toBe('sent');
      const [row] = await stack.api.db.query<{ provider_message_id: string }>('SELECT provider_message_id FROM messages WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
      return { id, sid: row.provider_message_id };
    };
    const status = async (sid: string, MessageStatus: string) => {
      const path = `/callbacks/twilio/${workspace.workspaceId}/status`;
      expect(await twilio.callback({ postTo: `${stack.api.url}${path}`, signedUrl: `${PUBLIC_BASE_URL}${path}`, authToken, params: { MessageSid: sid, MessageStatus } })).toBe(200);
    };

    const delivered = await sendOne();
    await status(delivered.sid, 'delivered');
    await status(delivered.sid, 'delivered');
    const undelivered = await sendOne();
    await status(undelivered.sid, 'undelivered');

    const after = await read();
    expect({
      sent: after.sent - before.sent,
      delivered: after.delivered - before.delivered,
      failed: after.failed - before.failed,
      calls: after.calls - before.calls,
    }).toEqual({ sent: 2, delivered: 1, failed: 1, calls: 2 });
  });
});
