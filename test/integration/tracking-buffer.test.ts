import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { ClientLimit } from '../../api/http/client-limits';
import { TrackingHitBuffer } from '../../api/tracking/hit-buffer';
import { createHitGate } from '../../api/tracking/hit-gate';
import { TrackedMessageCache } from '../../api/tracking/message-cache';
import { trackingRoutes } from '../../api/tracking/routes';
import { parseMasterKey } from '../../core/secrets';
import { trackingKey } from '../../core/tracking/tokens';
import { findTrackedMessage } from '../../db/repositories/message-links';
import { recordTrackingEvents, type TrackingEvent } from '../../db/repositories/tracking-events';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';
import { createTrackedMessage, type TrackedMessage } from '../helpers/tracked-message';

const logger = pino({ level: 'silent' });
const person = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

describe('the tracking hit buffer', () => {
  let api: ApiHarness;
  let workspace: TestWorkspace;
  let message: TrackedMessage;

  beforeAll(async () => {
    api = await startApi();
    workspace = await createTestWorkspace(api);
  });
  beforeEach(async () => {
    message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
  });
  afterAll(async () => {
    await api.close();
  });

  /** Writes to the real database after refusing the first `refusals` batches, as an unreachable one would. */
  function flakyWrite(refusals: number) {
    const calls = { refused: 0, stored: 0 };
    const write = async (events: TrackingEvent[]) => {
      if (calls.refused < refusals) {
        calls.refused += 1;
        throw new Error('connection refused');
      }
      calls.stored += await recordTrackingEvents(api.db, events);
    };
    return { calls, write };
  }

  const opens = (buffer: TrackingHitBuffer, count: number) => {
    for (let i = 0; i < count; i += 1) {
      buffer.record({ kind: 'open', messageId: message.messageId, method: 'GET', userAgent: person, ip: '198.51.100.9', at: Date.now() - 5_000, link: null, sentAt: null });
    }
  };

  const stored = async () => {
    const [row] = await api.db.query<{ events: string; opens_human: number }>(
      `SELECT (SELECT count(*) FROM message_events WHERE message_id = $1 AND type = 'open') AS events, opens_human FROM messages WHERE id = $1`,
      { bind: [message.messageId], type: QueryTypes.SELECT },
    );
    return { events: Number(row.events), opensHuman: row.opens_human };
  };

  it('a batch the database refuses is kept and stored once by the next flush', async () => {
    const { calls, write } = flakyWrite(1);
    const buffer = new TrackingHitBuffer({ write, logger, flushIntervalMs: 600_000 });
    opens(buffer, 3);
    await buffer.flush();
    expect(buffer.waiting).toBe(3);
    expect(await stored()).toEqual({ events: 0, opensHuman: 0 });
    await buffer.flush();
    expect(buffer.waiting).toBe(0);
    expect(await stored()).toEqual({ events: 3, opensHuman: 3 });
    expect(calls).toEqual({ refused: 1, stored: 3 });
    await buffer.close();
  });

  it('closing keeps trying while the database refuses, and loses nothing', async () => {
    const { write } = flakyWrite(3);
    const buffer = new TrackingHitBuffer({ write, logger, flushIntervalMs: 600_000, maxBatch: 4 });
    opens(buffer, 10);
    await buffer.close(5_000);
    expect(buffer.waiting).toBe(0);
    expect(await stored()).toEqual({ events: 10, opensHuman: 10 });
  });

  it('clicks are answered without waiting for their write', async () => {
    const keys = [trackingKey(parseMasterKey(api.config.MASTER_KEY))];
    // A database that never answers a write: the redirect must not notice.
    const buffer = new TrackingHitBuffer({ write: () => new Promise(() => undefined), logger, flushIntervalMs: 10 });
    const messages = new TrackedMessageCache((id) => findTrackedMessage(api.db, id));
    // No replay window: the three clicks below are a person's, seconds apart.
    const gate = createHitGate({ redis: api.redis, limit: new ClientLimit(api.redis, 'tracking-buffer-test', 1_000), replayWindowMs: 0 });
    const app = express().use(trackingRoutes({ keys, messages, hits: buffer, gate }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (let i = 0; i < 3; i += 1) {
        const response = await fetch(`${base}${message.clickPath('review-cta')}`, { redirect: 'manual', headers: { 'user-agent': person } });
        expect(response.status).toBe(302);
        await new Promise((resolve) => setTimeout(resolve, 1_100));
      }
      expect(buffer.waiting).toBe(3);
    } finally {
      server.close();
    }
  });
});
