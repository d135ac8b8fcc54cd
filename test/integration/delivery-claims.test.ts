import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { claimDeliveries, recordSent } from '../../db/repositories/message-delivery';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

// The delivery fence, many messages per statement (the delivery activities group-commit claims and
// records): each attempt still wins or loses on its own.
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

async function queued(count: number): Promise<{ workspaceId: string; ids: string[] }> {
  const { workspaceId } = await createTestWorkspace(api, { plan: 'pro' });
  return { workspaceId, ids: await queueMessages(api.db, workspaceId, { kind: 'campaign', count, from: 'a@example.com' }) };
}

const lease = 15_000;

describe('claiming deliveries together', () => {
  it('two attempts of one message in one statement → exactly one claims it, the other finds it busy', async () => {
    const { workspaceId, ids } = await queued(1);
    const [first, second] = await claimDeliveries(api.db, workspaceId, [
      { messageId: ids[0], claim: randomUUID() },
      { messageId: ids[0], claim: randomUUID() },
    ], lease);
    expect([first.state, second.state].sort()).toEqual(['busy', 'claimed']);
  });

  it('a batch of fresh, held, expired and sent messages → each answered on its own', async () => {
    const { workspaceId, ids } = await queued(4);
    const [fresh, held, expired, sent] = ids;
    const heldClaim = randomUUID();
    const expiredClaim = randomUUID();
    await claimDeliveries(api.db, workspaceId, [{ messageId: held, claim: heldClaim }, { messageId: expired, claim: expiredClaim }], lease);
    await api.db.query(`UPDATE messages SET delivery_claimed_until = now() - interval '1 second' WHERE id = $1`, { bind: [expired] });
    await recordSent(api.db, workspaceId, [{ messageId: sent, provider: 'smtp', providerMessageId: `<${sent}@test>` }]);

    const answers = await claimDeliveries(api.db, workspaceId, ids.map((messageId) => ({ messageId, claim: randomUUID() })), lease);
    expect(answers[ids.indexOf(fresh)]).toEqual({ state: 'claimed', previousClaim: null });
    expect(answers[ids.indexOf(held)]).toEqual({ state: 'busy', leaseLeftMs: expect.any(Number) });
    expect(answers[ids.indexOf(expired)]).toEqual({ state: 'claimed', previousClaim: expiredClaim });
    expect(answers[ids.indexOf(sent)]).toEqual({ state: 'done' });
  });

  it('another workspace\'s message in the batch → not claimed, and left untouched', async () => {
    const mine = await queued(1);
    const theirs = await queued(1);
    const [answer] = await claimDeliveries(api.db, mine.workspaceId, [{ messageId: theirs.ids[0], claim: randomUUID() }], lease);
    expect(answer).toEqual({ state: 'done' });
    const [row] = await api.db.query<{ delivery_claim: string | null }>('SELECT delivery_claim FROM messages WHERE id = $1', { bind: [theirs.ids[0]], type: QueryTypes.SELECT });
    expect(row.delivery_claim).toBeNull();
  });
});

describe('recording sends together', () => {
  it('three sends recorded in one statement, then again → each message sent once with one `sent` event', async () => {
    const { workspaceId, ids } = await queued(3);
    const receipts = ids.map((messageId) => ({ messageId, provider: 'smtp', providerMessageId: `<${messageId}@test>`, data: { n: 1 } }));
    await recordSent(api.db, workspaceId, receipts);
    await recordSent(api.db, workspaceId, receipts);
    const rows = await api.db.query<{ status: string; provider_message_id: string; events: number }>(
      `SELECT m.status, m.provider_message_id, (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.type = 'sent') AS events
       FROM messages m WHERE m.id = ANY($1::uuid[]) ORDER BY m.id`,
      { bind: [ids], type: QueryTypes.SELECT },
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ status: 'sent', provider_message_id: expect.stringMatching(/@test>$/), events: 1 });
  });
});
