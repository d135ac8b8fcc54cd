import { QueryTypes } from 'sequelize';
import { type ChatStack, startChatStack } from '../helpers/chat-stack';
import { queueChatMessage } from '../helpers/chat-workspaces';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

/** One provider route down holds back only its own messages (docs/delivery.md "When a provider fails"). */
let chat: ChatStack;
beforeAll(async () => {
  // No probe during the test: the open email route stays open until the test closes it.
  chat = await startChatStack({ PROVIDER_PROBE_INTERVAL_MS: '600000' });
});
afterAll(() => chat?.close());

jest.setTimeout(90_000);

const db = () => chat.stack.api.db;
const setEmailRoute = (state: 'open' | 'closed') =>
  db().query(
    `INSERT INTO provider_breakers (route, state, failures, opened_at, probe_at) VALUES ('email:smtp', $1, 5, now(), now())
     ON CONFLICT (route) DO UPDATE SET state = $1, failures = CASE WHEN $1 = 'open' THEN 5 ELSE 0 END, opened_at = now(), probe_at = now()`,
    { bind: [state] },
  );

describe('one provider route down', () => {
  it('with the email route open, a Telegram message is sent while the email waits in the outbox undispatched; closed, the email goes', async () => {
    const { workspaceId, domain } = await createTestWorkspace(chat.stack, { domain: true, telegram: chat.telegram });
    // The route opens and the messages are queued while no dispatcher runs: a round already under way would have
    // read the breakers before the route opened and could claim the email queued after it.
    await chat.stack.stopDispatcher();
    await setEmailRoute('open');
    try {
      const [email] = await queueMessages(db(), workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}`, toPrefix: 'routes' });
      const telegram = await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: '4242', content: { text: 'Still flowing' } });
      chat.stack.startDispatcher();
      expect(await chat.stack.waitForStatus(workspaceId, telegram, ['sent', 'failed'])).toBe('sent');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const [row] = await db().query<{ status: string; dispatched: boolean }>('SELECT status, dispatched_at IS NOT NULL AS dispatched FROM messages WHERE id = $1', {
        bind: [email],
        type: QueryTypes.SELECT,
      });
      expect(row).toEqual({ status: 'queued', dispatched: false });
      await setEmailRoute('closed');
      expect(await chat.stack.waitForStatus(workspaceId, email, ['sent', 'failed'])).toBe('sent');
    } finally {
      await setEmailRoute('closed');
    }
  });
});
