import { createHmac, hkdfSync, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { generateApiKey } from '../../core/api-keys';
import { configKeyring } from '../../core/config';
import { parseMasterKey, sealSecret } from '../../core/secrets';
import { webhookSecretTokens } from '../../providers/telegram/updates';
import { unsubscribeTokens } from '../../core/unsubscribe-token';
import { saveTelegramIntegration } from '../../db/repositories/telegram';
import { saveTwilioIntegration } from '../../db/repositories/whatsapp';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { createTrackedMessage } from '../helpers/tracked-message';
import { twilioSignature } from '../helpers/twilio-stand-in';

/**
 * The routes anyone on the internet can call (issue 29): each limited per client address, and each
 * refusing a made-up credential before it reads anything. The client is named in X-Forwarded-For, as a
 * load balancer in front would (TRUST_PROXY=loopback); every test uses fresh random addresses, because the
 * counts live in Redis for a minute.
 */
const PUBLIC_BASE_URL = 'https://edge.example.test';
const LIMIT = 5;

const randomAddress = () => `198.18.${randomInt(256)}.${1 + randomInt(254)}`;

describe('the public edge', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({
      TRUST_PROXY: 'loopback',
      PUBLIC_BASE_URL,
      RATE_LIMIT_PER_SECOND: '1000',
      TRACKING_PER_IP_PER_MINUTE: String(LIMIT),
      UNSUBSCRIBE_PER_IP_PER_MINUTE: String(LIMIT),
      CALLBACKS_PER_IP_PER_MINUTE: String(LIMIT),
      DOCS_PER_IP_PER_MINUTE: String(LIMIT),
      UNKNOWN_KEYS_PER_IP_PER_MINUTE: String(LIMIT),
      TRACKING_REPLAY_WINDOW_MS: '1000',
      TWILIO_PARKED_PER_WORKSPACE_PER_HOUR: '3',
      // A deployment that never sent version 1 links turns them off, so none costs a read.
      UNSUBSCRIBE_V1_LINKS: 'false',
    });
  });
  afterAll(() => api.close());

  const from = (address: string, init: RequestInit & { userAgent?: string } = {}) => ({
    ...init,
    redirect: 'manual' as const,
    headers: { 'x-forwarded-for': address, 'user-agent': init.userAgent ?? 'Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15', ...(init.headers as Record<string, string>) },
  });
  const get = (path: string, address: string, init: RequestInit & { userAgent?: string } = {}) => fetch(`${api.url}${path}`, from(address, init));

  /** Runs `work` and answers how many statements this API process sent to PostgreSQL meanwhile, and their text. */
  async function statementsDuring(work: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const name = `count-${randomUUID()}`;
    api.db.addHook('afterQuery', name, (_options, query) => {
      seen.push(String((query as unknown as { sql?: string }).sql ?? ''));
    });
    try {
      await work();
    } finally {
      api.db.removeHook('afterQuery', name);
    }
    return seen;
  }

  describe('per client address', () => {
    it.each([
      ['unsubscribe GET', (address: string) => get(`/unsubscribe/${randomBytes(65).toString('base64url')}`, address), 404],
      ['unsubscribe POST', (address: string) => get(`/unsubscribe/${randomBytes(65).toString('base64url')}`, address, { method: 'POST' }), 404],
      ['a Twilio callback', (address: string) => get(`/callbacks/twilio/${randomUUID()}/status`, address, { method: 'POST', body: 'MessageSid=SM1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 403],
      ['a Telegram update', (address: string) => get(`/callbacks/telegram/${randomUUID()}`, address, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }), 403],
      ['the OpenAPI document', (address: string) => get('/api/v1/openapi.json', address), 200],
    ])('a flood of %s from one address is answered 429 with Retry-After past the limit, while another address is still served', async (_route, send, served) => {
      const flooding = randomAddress();
      const answers = [];
      for (let i = 0; i <= LIMIT; i += 1) answers.push(await send(flooding));
      expect(answers.map((response) => response.status)).toEqual([...Array<number>(LIMIT).fill(served), 429]);
      const limited = answers[LIMIT];
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await limited.json()).toEqual({ error: 'rate_limit_exceeded', limit: LIMIT, retryAfter: expect.any(Number) });
      expect((await send(randomAddress())).status).toBe(served);
    });

    it('an IPv6 client is counted with its /64: another address of the same /64 is limited too, another /64 is not', async () => {
      const prefix = `2001:db8:${randomInt(0xffff).toString(16)}:${randomInt(0xffff).toString(16)}`;
      const openapi = (address: string) => get('/api/v1/openapi.json', address);
      for (let i = 0; i < LIMIT; i += 1) expect((await openapi(`${prefix}::${i + 1}`)).status).toBe(200);
      expect((await openapi(`${prefix}::ffff`)).status).toBe(429);
      expect((await openapi(`2001:db8:${randomInt(0xffff).toString(16)}::1`)).status).toBe(200);
    });
  });

  describe('unknown API keys', () => {
    const usage = (address: string, key: string) => get('/api/v1/usage', address, { headers: { authorization: `Bearer ${key}` } });
    const keyReads = (statements: string[]) => statements.filter((sql) => sql.includes('api_keys'));

    it('a repeated made-up key is looked up once; past the limit a new one is answered 429 without any lookup', async () => {
      const address = randomAddress();
      const repeated = generateApiKey().key;
      const first = await statementsDuring(async () => {
        for (let i = 0; i < 3; i += 1) expect((await usage(address, repeated)).status).toBe(401);
      });
      expect(keyReads(first)).toHaveLength(1);
      for (let i = 3; i < LIMIT; i += 1) expect((await usage(address, generateApiKey().key)).status).toBe(401);
      const flood = await statementsDuring(async () => {
        for (let i = 0; i < 20; i += 1) expect((await usage(address, generateApiKey().key)).status).toBe(429);
      });
      expect(flood).toEqual([]);
      expect((await usage(randomAddress(), generateApiKey().key)).status).toBe(401);
    });

    it('a valid key the cache holds keeps working from an address that is flooding made-up keys', async () => {
      const address = randomAddress();
      const { apiKey } = await createTestWorkspace(api);
      expect((await usage(address, apiKey)).status).toBe(200);
      for (let i = 0; i < LIMIT + 5; i += 1) await usage(address, generateApiKey().key);
      expect((await usage(address, apiKey)).status).toBe(200);
    });
  });

  describe('tracking', () => {
    const trackingEvents = async (messageId: string) => {
      await api.tracking.buffer.flush(true);
      const rows = await api.db.query<{ type: string; count: string }>(
        "SELECT type, count(*) FROM message_events WHERE message_id = $1 AND type IN ('open', 'click') GROUP BY type",
        { bind: [messageId], type: QueryTypes.SELECT },
      );
      return Object.fromEntries(rows.map((row) => [row.type, Number(row.count)]));
    };

    it('a replayed pixel counts once; the same person opening again after the window counts again', async () => {
      const { workspaceId } = await createTestWorkspace(api);
      const message = await createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: 3_600_000 });
      const address = randomAddress();
      const replays = await Promise.all(Array.from({ length: 4 }, () => get(message.pixelPath, address)));
      expect(replays.map((response) => response.status)).toEqual([200, 200, 200, 200]);
      expect(await trackingEvents(message.messageId)).toEqual({ open: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await get(message.pixelPath, address);
      expect(await trackingEvents(message.messageId)).toEqual({ open: 2 });
    });

    it('a client past its limit is still redirected, and its clicks are not stored; another address is', async () => {
      const { workspaceId } = await createTestWorkspace(api);
      const message = await createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: 3_600_000 });
      const address = randomAddress();
      // A different user agent each time, so none of these is a replay of another.
      const clicks = [];
      for (let i = 0; i < LIMIT + 3; i += 1) clicks.push(await get(message.clickPath('review-cta'), address, { userAgent: `Mozilla/5.0 click-${i}` }));
      expect(clicks.map((response) => response.status)).toEqual(Array<number>(LIMIT + 3).fill(302));
      expect(new Set(clicks.map((response) => response.headers.get('location'))).size).toBe(1);
      expect(await trackingEvents(message.messageId)).toEqual({ click: LIMIT });
      await get(message.clickPath('review-cta'), randomAddress());
      expect(await trackingEvents(message.messageId)).toEqual({ click: LIMIT + 1 });
    });

    it('a forged click token is refused with no database read', async () => {
      const { workspaceId } = await createTestWorkspace(api);
      const message = await createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: 60_000 });
      const forged = message.clickPath('review-cta').replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
      const statements = await statementsDuring(async () => {
        expect((await get(forged, randomAddress())).status).toBe(404);
      });
      expect(statements).toEqual([]);
    });
  });

  describe('unsubscribe links', () => {
    it('a made-up, altered, foreign-key or version 1 link answers 404 with no database read; a genuine one reads', async () => {
      const { workspaceId } = await createTestWorkspace(api);
      const toPrefix = `edge-${randomUUID().slice(0, 8)}`;
      const [messageId] = await queueMessages(api.db, workspaceId, { kind: 'campaign', count: 1, from: 'news@edge.example.test', toPrefix });
      const claims = { workspaceId, messageId, address: `${toPrefix}-0@example.org` };
      const masterKey = parseMasterKey(api.config.MASTER_KEY);
      const genuine = unsubscribeTokens([masterKey]).sign(claims);
      const flipped = Buffer.from(genuine, 'base64url');
      flipped[40] ^= 1;
      const legacyKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging unsubscribe link v1', 32));
      const legacyPayload = Buffer.from(Buffer.from(genuine, 'base64url').subarray(0, 33));
      legacyPayload[0] = 1;
      const legacy = Buffer.concat([legacyPayload, createHmac('sha256', legacyKey).update(legacyPayload).update(claims.address).digest()]).toString('base64url');
      const forged = [flipped.toString('base64url'), unsubscribeTokens([randomBytes(32)]).sign(claims), legacy, randomBytes(65).toString('base64url')];

      const statements = await statementsDuring(async () => {
        for (const token of forged) {
          expect((await get(`/unsubscribe/${token}`, randomAddress())).status).toBe(404);
          expect((await get(`/unsubscribe/${token}`, randomAddress(), { method: 'POST' })).status).toBe(404);
        }
      });
      expect(statements).toEqual([]);

      const read = await statementsDuring(async () => {
        const page = await get(`/unsubscribe/${genuine}`, randomAddress());
        expect(page.status).toBe(200);
        expect(await page.text()).toContain(claims.address);
      });
      expect(read.length).toBeGreaterThan(0);
    });
  });

  describe('Telegram updates', () => {
    /** A workspace whose bot was connected with `secret` as its webhook secret token. */
    async function telegramWorkspace(harness: ApiHarness, secret: (workspaceId: string) => string) {
      const { workspaceId } = await createTestWorkspace(harness);
      const keyring = configKeyring(harness.config);
      const token = secret(workspaceId);
      const botId = String(randomInt(1e9, 2e9));
      await saveTelegramIntegration(harness.db, workspaceId, {
        botId,
        botUsername: `edge_${botId}_bot`,
        botTokenSealed: sealSecret(keyring, { workspaceId, column: 'telegram_integrations.bot_token' }, `${botId}:secret`),
        webhookUrl: `${PUBLIC_BASE_URL}/callbacks/telegram/${workspaceId}`,
        webhookSecretSealed: sealSecret(keyring, { workspaceId, column: 'telegram_integrations.webhook_secret' }, token),
      });
      return { workspaceId, token };
    }
    const update = (harness: ApiHarness, workspaceId: string, secret?: string) =>
      fetch(`${harness.url}/callbacks/telegram/${workspaceId}`, from(randomAddress(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-telegram-bot-api-secret-token': secret }) },
        body: JSON.stringify({ update_id: 1 }),
      }));
    /** A version 1 secret, as connected before issue 29: 32 random bytes. */
    const legacySecret = () => randomBytes(32).toString('base64url');

    it('an update with a made-up, altered or missing secret token is refused with no database read; the genuine one is read', async () => {
      const secrets = webhookSecretTokens([parseMasterKey(api.config.MASTER_KEY)]);
      const { workspaceId, token } = await telegramWorkspace(api, (id) => secrets.generate(id));
      // The first unsigned token reads which workspaces still hold a version 1 secret; later ones do not.
      expect((await update(api, workspaceId, legacySecret())).status).toBe(403);
      const altered = `${token.slice(0, 30)}${token[30] === 'A' ? 'B' : 'A'}${token.slice(31)}`;
      const statements = await statementsDuring(async () => {
        for (const secret of [altered, secrets.generate(randomUUID()), legacySecret(), '', undefined]) {
          expect((await update(api, workspaceId, secret)).status).toBe(403);
        }
        expect((await update(api, randomUUID(), secrets.generate(randomUUID()))).status).toBe(403);
      });
      expect(statements).toEqual([]);
      expect((await update(api, workspaceId, token)).status).toBe(200);
    });

    it('a workspace still holding a version 1 secret keeps receiving its updates; a wrong token for it is refused', async () => {
      const { workspaceId, token } = await telegramWorkspace(api, legacySecret);
      // A process started after it was connected, as after an upgrade.
      const upgraded = await startApi({ TRUST_PROXY: 'loopback', PUBLIC_BASE_URL });
      try {
        expect((await update(upgraded, workspaceId, token)).status).toBe(200);
        expect((await update(upgraded, workspaceId, legacySecret())).status).toBe(403);
      } finally {
        await upgraded.close();
      }
    });
  });

  describe('Twilio statuses for unknown messages', () => {
    async function twilioWorkspace() {
      const { workspaceId } = await createTestWorkspace(api);
      const authToken = randomBytes(16).toString('hex');
      await saveTwilioIntegration(api.db, workspaceId, {
        accountSid: `AC${randomBytes(16).toString('hex')}`,
        authTokenSealed: sealSecret(configKeyring(api.config), { workspaceId, column: 'twilio_integrations.auth_token' }, authToken),
        whatsappFrom: '+14155552671',
      });
      return { workspaceId, authToken };
    }

    /** A status posted as Twilio would, signed with `authToken` (or with `signature` as given). */
    const status = (workspaceId: string, authToken: string, params: Record<string, string>, signature?: string) => {
      const path = `/callbacks/twilio/${workspaceId}/status`;
      return fetch(`${api.url}${path}`, from(randomAddress(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature ?? twilioSignature(authToken, `${PUBLIC_BASE_URL}${path}`, params) },
        body: new URLSearchParams(params).toString(),
      }));
    };
    const parked = async (sids: string[]) =>
      (await api.db.query<{ event: { workspaceId: string } }>("SELECT event FROM parked_provider_events WHERE provider = 'twilio' AND provider_message_id = ANY($1)", {
        bind: [sids],
        type: QueryTypes.SELECT,
      })).map((row) => row.event.workspaceId);
    const sid = () => `SM${randomBytes(16).toString('hex')}`;

    it('a status whose signature fails is refused and not parked', async () => {
      const { workspaceId, authToken } = await twilioWorkspace();
      const unknown = sid();
      const params = { MessageSid: unknown, MessageStatus: 'delivered' };
      expect((await status(workspaceId, 'another-token', params)).status).toBe(403);
      expect((await status(workspaceId, authToken, params, 'bm90IGEgc2lnbmF0dXJl')).status).toBe(403);
      expect(await parked([unknown])).toEqual([]);
    });

    it('a workspace signing statuses for made-up SIDs parks at most its hourly allowance, then 429; another workspace still parks', async () => {
      const own = await twilioWorkspace();
      const sids = Array.from({ length: 4 }, sid);
      const answers = [];
      for (const unknown of sids) answers.push((await status(own.workspaceId, own.authToken, { MessageSid: unknown, MessageStatus: 'delivered' })).status);
      expect(answers).toEqual([200, 200, 200, 429]);
      expect(await parked(sids)).toHaveLength(3);
      const other = await twilioWorkspace();
      const elsewhere = sid();
      expect((await status(other.workspaceId, other.authToken, { MessageSid: elsewhere, MessageStatus: 'delivered' })).status).toBe(200);
      expect(await parked([elsewhere])).toEqual([other.workspaceId]);
    });

    it('a status parked by one workspace does not keep another workspace\'s status for the same SID out', async () => {
      const first = await twilioWorkspace();
      const second = await twilioWorkspace();
      const shared = sid();
      for (const { workspaceId, authToken } of [first, second]) {
        expect((await status(workspaceId, authToken, { MessageSid: shared, MessageStatus: 'delivered' })).status).toBe(200);
      }
      expect((await parked([shared])).sort()).toEqual([first.workspaceId, second.workspaceId].sort());
    });
  });
});
