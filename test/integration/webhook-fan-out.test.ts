import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../../core/config';
import { insertMessageEvent } from '../../db/repositories/message-events';
import { insertPlatformEvent } from '../../db/repositories/platform-events';
import { updateWebhook } from '../../db/repositories/webhooks';
import { createSequelize } from '../../db/sequelize';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { queueChatMessage } from '../helpers/chat-workspaces';
import { createWebhookRow } from '../helpers/webhook-receiver';

/**
 * Fan-out happens where events are stored (the triggers of migration 0011), so it is proven by storing
 * events as each code path does (one row, or many in one statement as buffered tracking hits are) and
 * reading the deliveries the database made.
 */
describe('fan-out of stored events to webhook deliveries', () => {
  const config = loadConfig(process.env);
  let db: Sequelize;
  beforeAll(() => {
    db = createSequelize(config.DATABASE_URL);
  });
  afterAll(() => db.close());

  const deliveries = (webhookId: string) =>
    db.query<{ event: string; status: string; message_event_id: string | null; platform_event_id: string | null }>(
      'SELECT event, status, message_event_id, platform_event_id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at, event',
      { bind: [webhookId], type: QueryTypes.SELECT },
    );

  async function setUp(events: string[]) {
    const { workspaceId } = await createTestWorkspace(db);
    const [messageId] = await queueMessages(db, workspaceId, { kind: 'transactional', count: 1, from: 'hi@acme.test' });
    const webhook = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: 'https://hooks.example.com/in', events });
    return { workspaceId, messageId, webhook };
  }

  it('each timeline event becomes its webhook event; machine, prefetch and bot opens and clicks become none', async () => {
    const { workspaceId, messageId, webhook } = await setUp(['*']);
    const stored: Array<[string, string | null]> = [
      ['sent', null], ['delivered', null], ['delivery_delayed', null], ['bounce', null], ['complaint', null], ['failed', null],
      ['unsubscribe', null], ['open', 'human'], ['open', 'machine'], ['open', 'prefetch'], ['click', 'human'], ['click', 'bot'],
      ['something_else', null],
    ];
    for (const [type, classification] of stored) await insertMessageEvent(db, workspaceId, messageId, { type, classification });
    expect((await deliveries(webhook.id)).map((delivery) => delivery.event).sort()).toEqual([
      'email.bounced', 'email.clicked', 'email.complained', 'email.delivered', 'email.delivery_delayed', 'email.failed', 'email.opened',
      'email.sent', 'email.unsubscribed',
    ]);
  });

  it('an endpoint gets only the events it subscribed to; a disabled one and another workspace\'s get nothing', async () => {
    const { workspaceId, messageId, webhook } = await setUp(['email.delivered', 'domain.verified']);
    const disabled = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: 'https://hooks.example.com/off', events: ['*'], enabled: false });
    const other = await setUp(['*']);
    await insertMessageEvent(db, workspaceId, messageId, { type: 'sent' });
    await insertMessageEvent(db, workspaceId, messageId, { type: 'delivered' });
    await insertPlatformEvent(db, workspaceId, { type: 'domain.verified', data: { id: 'd1' } });
    await insertPlatformEvent(db, workspaceId, { type: 'domain.failed', data: { id: 'd1' } });
    expect((await deliveries(webhook.id)).map((delivery) => [delivery.event, delivery.status])).toEqual([
      ['email.delivered', 'pending'],
      ['domain.verified', 'pending'],
    ]);
    expect(await deliveries(disabled.id)).toEqual([]);
    expect(await deliveries(other.webhook.id)).toEqual([]);
  });

  it('events stored many in one statement (buffered tracking hits) each become a delivery, for every subscribed endpoint', async () => {
    const { workspaceId, messageId, webhook } = await setUp(['email.opened']);
    const second = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: 'https://hooks.example.com/2', events: ['*'] });
    await db.query(
      `INSERT INTO message_events (id, workspace_id, message_id, type, classification)
       SELECT gen_random_uuid(), $1, $2, 'open', CASE WHEN i % 2 = 0 THEN 'human' ELSE 'machine' END FROM generate_series(1, 500) AS i`,
      { bind: [workspaceId, messageId] },
    );
    expect(await deliveries(webhook.id)).toHaveLength(250);
    expect(await deliveries(second.id)).toHaveLength(250);
    expect(new Set((await deliveries(webhook.id)).map((delivery) => delivery.message_event_id)).size).toBe(250);
  });

  it('a redelivered provider notification stored once makes one delivery; an endpoint disabled later gets no new ones', async () => {
    const { workspaceId, messageId, webhook } = await setUp(['email.delivered']);
    await insertMessageEvent(db, workspaceId, messageId, { type: 'delivered', providerEventId: 'n-1' });
    await insertMessageEvent(db, workspaceId, messageId, { type: 'delivered', providerEventId: 'n-1' });
    expect(await deliveries(webhook.id)).toHaveLength(1);
    await updateWebhook(db, workspaceId, webhook.id, { enabled: false });
    await insertMessageEvent(db, workspaceId, messageId, { type: 'delivered', providerEventId: 'n-2' });
    const after = await deliveries(webhook.id);
    expect(after).toHaveLength(1);
    // Disabling ended the delivery that was still waiting: a disabled endpoint gets nothing more.
    expect(after[0].status).toBe('failed');
  });
  it('a WhatsApp or Telegram message\'s sent, delivered and failed become message.*; its other events and email names become none; message.received fans out', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const webhook = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: 'https://hooks.example.com/chat', events: ['*'] });
    const whatsapp = await queueChatMessage(db, workspaceId, { channel: 'whatsapp', to: '+14155550100', content: { text: 'x' } });
    const telegram = await queueChatMessage(db, workspaceId, { channel: 'telegram', to: '12345', content: { text: 'x' } });
    for (const type of ['sent', 'delivered']) await insertMessageEvent(db, workspaceId, whatsapp, { type });
    await insertMessageEvent(db, workspaceId, whatsapp, { type: 'open', classification: 'human' });
    await insertMessageEvent(db, workspaceId, whatsapp, { type: 'fallback' });
    await insertMessageEvent(db, workspaceId, telegram, { type: 'failed' });
    await insertPlatformEvent(db, workspaceId, { type: 'message.received', data: { channel: 'telegram', from: '12345' } });
    expect((await deliveries(webhook.id)).map((delivery) => delivery.event).sort()).toEqual(['message.delivered', 'message.failed', 'message.received', 'message.sent']);
  });

  it('an endpoint subscribed to message.sent only gets chat sends, not email.sent', async () => {
    const { workspaceId, messageId, webhook } = await setUp(['message.sent']);
    const chat = await queueChatMessage(db, workspaceId, { channel: 'telegram', to: '777', content: { text: 'x' } });
    await insertMessageEvent(db, workspaceId, messageId, { type: 'sent' });
    await insertMessageEvent(db, workspaceId, chat, { type: 'sent' });
    expect((await deliveries(webhook.id)).map((delivery) => delivery.event)).toEqual(['message.sent']);
  });
});
