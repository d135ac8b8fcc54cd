import { findSuppressed, suppressAddresses } from '../../db/repositories/suppressions';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

describe('suppressions', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function workspace() {
    const created = await createTestWorkspace(api);
    const { call } = created;
    return { ...created, call };
  }

  it('an address is suppressed once: 201, then 200 created false keeping the first reason', async () => {
    const { call } = await workspace();
    const first = await call('POST', '/suppressions', { address: 'Someone@Example.com', reason: 'unsubscribed' });
    expect(first).toMatchObject({ status: 201, body: { channel: 'email', address: 'someone@example.com', reason: 'unsubscribed', created: true } });
    const repeat = await call('POST', '/suppressions', { address: 'someone@example.com' });
    expect(repeat).toMatchObject({ status: 200, body: { reason: 'unsubscribed', created: false } });
    expect((await call('POST', '/suppressions', { address: 'nope' })).status).toBe(422);
    expect((await call('POST', '/suppressions', { address: 'x@example.com', reason: 'erased' })).status).toBe(422);
  });

  it('lists newest first with filters and limit/offset, and a delete lifts the suppression', async () => {
    const { call } = await workspace();
    await call('POST', '/suppressions', { address: 'a@example.com' });
    await call('POST', '/suppressions', { address: '+14155550123', channel: 'whatsapp', reason: 'complaint' });
    await call('POST', '/suppressions', { address: 'b@example.com', reason: 'hard_bounce' });
    const all = (await call('GET', '/suppressions')).body as { data: Array<{ address: string }>; total: number; limit: number; offset: number };
    expect(all).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(all.data.map((row) => row.address)).toEqual(['b@example.com', '+14155550123', 'a@example.com']);
    expect(((await call('GET', '/suppressions?channel=whatsapp')).body as { total: number }).total).toBe(1);
    expect(((await call('GET', '/suppressions?limit=1&offset=1')).body as { data: Array<{ address: string }> }).data.map((row) => row.address)).toEqual(['+14155550123']);

    expect(await call('DELETE', '/suppressions/%2B14155550123')).toMatchObject({ status: 200, body: { deleted: true, address: '+14155550123', channels: ['whatsapp'] } });
    expect((await call('DELETE', '/suppressions/%2B14155550123')).status).toBe(404);
    expect((await call('DELETE', '/suppressions/A%40EXAMPLE.COM')).status).toBe(200);
  });

  it('findSuppressed answers the given addresses with their reasons, matching in normalised form', async () => {
    const { workspaceId } = await workspace();
    expect(await suppressAddresses(api.db, workspaceId, 'email', ['Bounce@Example.com', 'bounce@example.com', 'invalid'], 'hard_bounce')).toBe(1);
    await suppressAddresses(api.db, workspaceId, 'email', ['unsub@example.com'], 'unsubscribed');
    const found = await findSuppressed(api.db, workspaceId, 'email', ['BOUNCE@example.com', 'unsub@example.com', 'fine@example.com', 'invalid']);
    expect(found).toEqual(new Map([['BOUNCE@example.com', 'hard_bounce'], ['unsub@example.com', 'unsubscribed']]));
    const other = await workspace();
    expect((await findSuppressed(api.db, other.workspaceId, 'email', ['bounce@example.com'])).size).toBe(0);
  });

  it('GET needs contacts:read, POST and DELETE need contacts:write', async () => {
    const { workspaceId } = await workspace();
    const { apiKey } = await createTestKey(api, workspaceId, ['contacts:read']);
    const call = api.as(apiKey);
    expect((await call('GET', '/suppressions')).status).toBe(200);
    expect(await call('POST', '/suppressions', { address: 'a@example.com' })).toMatchObject({ status: 403, body: { need: 'contacts:write' } });
    expect(await call('DELETE', '/suppressions/a%40example.com')).toMatchObject({ status: 403, body: { need: 'contacts:write' } });
  });
});
