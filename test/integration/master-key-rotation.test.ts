import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadDkimKey } from '../../activities/dkim';
import { configKeyring, loadConfig } from '../../core/config';
import { type Keyring, keyringOf, openSecret, parseMasterKey, resealSecret, sealContextOf, type SealedColumn, sealSecret } from '../../core/secrets';
import { unsubscribeTokens } from '../../core/unsubscribe-token';
import { saveAnalyticsConnection } from '../../db/repositories/analytics-connections';
import { findValuesToReseal, replaceSealedValues, SEALED_COLUMNS } from '../../db/repositories/sealed-secrets';
import { saveTelegramIntegration } from '../../db/repositories/telegram';
import { saveTwilioIntegration } from '../../db/repositories/whatsapp';
import { rotateWebhookSecret } from '../../db/repositories/webhooks';
import { createSequelize } from '../../db/sequelize';
import { resealSecrets } from '../../services/secret-reseal';
import { startApi } from '../helpers/api-harness';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { twilioSignature } from '../helpers/twilio-stand-in';
import { createWebhookRow } from '../helpers/webhook-receiver';

/**
 * A MASTER_KEY rotation as the README tells an operator to do it: secrets and links made under key A;
 * MASTER_KEY=B with MASTER_KEY_PREVIOUS=A; `secrets:reseal`; then A dropped. Real Postgres, the real API
 * (unsubscribe page, Twilio callback) and the real DKIM key loader.
 */
const PUBLIC_BASE_URL = 'https://messaging.example.com';
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('hex');
const env = (overrides: Record<string, string>) => configKeyring(loadConfig({ ...process.env, ...overrides }));
const ringA = env({ MASTER_KEY: keyA });
const rotated = env({ MASTER_KEY: keyB, MASTER_KEY_PREVIOUS: keyA });
const ringB = env({ MASTER_KEY: keyB });

let db: Sequelize;
beforeAll(() => {
  db = createSequelize(loadConfig(process.env).DATABASE_URL);
});
afterAll(() => db.close());

/** A value as the first format sealed it: AES-256-GCM under the raw key, no key id, no binding. */
function sealLegacy(key: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', parseMasterKey(key), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

interface Tenant {
  workspaceId: string;
  domain: string;
  /** The plaintext of every sealed column, by `table.column`. */
  secrets: Record<string, string>;
  unsubscribeLink: string;
}

/** A workspace with a value in every sealed column, all sealed under key A, and an unsubscribe link signed with A. */
async function tenantUnderKeyA(options: { legacyTwilio?: boolean } = {}): Promise<Tenant> {
  const { workspaceId } = await createTestWorkspace(db);
  const seal = (column: SealedColumn, plaintext: string, row: string | null = null) => sealSecret(ringA, sealContextOf(workspaceId, column, row), plaintext);
  const domain = (await addTestDomain(db, workspaceId, { masterKey: keyA })).domain;
  const webhook = await createWebhookRow(db, workspaceId, keyA, { url: 'https://hooks.example.com/in', events: ['*'] });
  const nextWebhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  await rotateWebhookSecret(db, workspaceId, webhook.id, seal('webhooks.secret', nextWebhookSecret, webhook.id), new Date(Date.now() + 86_400_000));
  const authToken = randomBytes(16).toString('hex');
  await saveTwilioIntegration(db, workspaceId, {
    accountSid: `AC${randomBytes(16).toString('hex')}`,
    authTokenSealed: options.legacyTwilio ? sealLegacy(keyA, authToken) : seal('twilio_integrations.auth_token', authToken),
    whatsappFrom: '+14155550000',
  });
  const [botToken, webhookSecret] = [`${Date.now()}:${randomBytes(18).toString('base64url')}`, randomBytes(32).toString('base64url')];
  await saveTelegramIntegration(db, workspaceId, {
    botId: String(Math.floor(Math.random() * 1e12)),
    botUsername: 'rotation_bot',
    botTokenSealed: seal('telegram_integrations.bot_token', botToken),
    webhookUrl: `${PUBLIC_BASE_URL}/callbacks/telegram/${workspaceId}`,
    webhookSecretSealed: seal('telegram_integrations.webhook_secret', webhookSecret),
  });
  const tokenAuth = randomBytes(16).toString('hex');
  await saveAnalyticsConnection(db, workspaceId, {
    provider: 'matomo', baseUrl: 'https://stats.example.com/index.php', siteId: 1, tokenSealed: seal('analytics_connections.token', tokenAuth), currency: null, goalNames: {},
  });
  const toPrefix = `reader-${randomUUID().slice(0, 8)}`;
  const [messageId] = await queueMessages(db, workspaceId, { kind: 'campaign', count: 1, from: `news@${domain}`, toPrefix });
  const dkim = await loadDkimKey(db, ringA, workspaceId, `news@${domain}`);
  return {
    workspaceId,
    domain,
    secrets: {
      'domains.dkim_private_key_sealed': dkim?.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() ?? '',
      'webhooks.secret_sealed': nextWebhookSecret,
      'webhooks.previous_secret_sealed': webhook.secret,
      'telegram_integrations.bot_token_sealed': botToken,
      'telegram_integrations.webhook_secret_sealed': webhookSecret,
      'twilio_integrations.auth_token_sealed': authToken,
      'analytics_connections.token_sealed': tokenAuth,
    },
    unsubscribeLink: `/unsubscribe/${unsubscribeTokens([parseMasterKey(keyA)]).sign({ workspaceId, messageId, address: `${toPrefix}-0@example.org` })}`,
  };
}

/** Every sealed value of the workspace as stored, with the row it is bound to, by `table.column`. */
async function storedRows(workspaceId: string): Promise<Record<string, { sealed: string; row: string | null }>> {
  const values: Record<string, { sealed: string; row: string | null }> = {};
  for (const spec of SEALED_COLUMNS) {
    const rows = await db.query<{ sealed: string; row: string | null }>(
      `SELECT ${spec.column} AS sealed, ${spec.row === null ? 'NULL' : `${spec.row}::text`} AS row FROM ${spec.table} WHERE workspace_id = $1`,
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    values[`${spec.table}.${spec.column}`] = rows[0];
  }
  return values;
}

async function storedValues(workspaceId: string): Promise<Record<string, string>> {
  return Object.fromEntries(Object.entries(await storedRows(workspaceId)).map(([column, { sealed }]) => [column, sealed]));
}

/** Every sealed value of the workspace, opened with the ring; the DKIM key through the signer's own loader. */
async function openedWith(ring: Keyring, tenant: Tenant): Promise<Record<string, string>> {
  const stored = await storedRows(tenant.workspaceId);
  const opened: Record<string, string> = {};
  for (const spec of SEALED_COLUMNS) {
    const { sealed, row } = stored[`${spec.table}.${spec.column}`];
    opened[`${spec.table}.${spec.column}`] = openSecret(ring, sealContextOf(tenant.workspaceId, spec.context, row), sealed);
  }
  const dkim = await loadDkimKey(db, ring, tenant.workspaceId, `news@${tenant.domain}`);
  expect(dkim?.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()).toBe(tenant.secrets['domains.dkim_private_key_sealed']);
  return opened;
}

/** A Twilio status callback signed with the workspace's auth token: the API answers 200 only if it opened the token. */
async function twilioCallback(apiUrl: string, tenant: Tenant): Promise<number> {
  const path = `/callbacks/twilio/${tenant.workspaceId}/status`;
  const params = { MessageSid: `SM${randomBytes(16).toString('hex')}`, MessageStatus: 'delivered' };
  const signature = twilioSignature(tenant.secrets['twilio_integrations.auth_token_sealed'], `${PUBLIC_BASE_URL}${path}`, params);
  const response = await fetch(`${apiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: new URLSearchParams(params).toString(),
  });
  return response.status;
}

describe('rotating MASTER_KEY', () => {
  it('secrets and links made under A work under B with A as previous; the re-seal moves them all to B; with A dropped every secret still opens', async () => {
    const tenant = await tenantUnderKeyA();
    const legacy = await tenantUnderKeyA({ legacyTwilio: true });
    expect(await openedWith(ringA, tenant)).toEqual(tenant.secrets);

    // B seals, A only opens and verifies: nothing breaks before the re-seal.
    expect(await openedWith(rotated, tenant)).toEqual(tenant.secrets);
    expect(await openedWith(rotated, legacy)).toEqual(legacy.secrets);
    const during = await startApi({ MASTER_KEY: keyB, MASTER_KEY_PREVIOUS: keyA, PUBLIC_BASE_URL });
    try {
      expect((await fetch(`${during.url}${tenant.unsubscribeLink}`)).status).toBe(200);
      expect(await twilioCallback(during.url, tenant)).toBe(200);
      expect(await twilioCallback(during.url, legacy)).toBe(200);
    } finally {
      await during.close();
    }

    // The re-seal, in batches smaller than the data, leaves every value of both tenants under B, and v1 too.
    const first = await resealSecrets(db, rotated, { batchSize: 2 });
    const ours = new Set([tenant.workspaceId, legacy.workspaceId]);
    expect(first.flatMap((report) => report.failed).filter((failure) => ours.has(failure.workspaceId))).toEqual([]);
    expect(first.reduce((sum, report) => sum + report.resealed, 0)).toBeGreaterThanOrEqual(14);
    const after = { tenant: await storedValues(tenant.workspaceId), legacy: await storedValues(legacy.workspaceId) };
    for (const value of [...Object.values(after.tenant), ...Object.values(after.legacy)]) expect(value.startsWith(`v2:${rotated.current.id}:`)).toBe(true);

    // Idempotent: a second run finds nothing of ours to do and changes nothing.
    const second = await resealSecrets(db, rotated, { batchSize: 2 });
    expect(second.reduce((sum, report) => sum + report.resealed, 0)).toBe(0);
    expect({ tenant: await storedValues(tenant.workspaceId), legacy: await storedValues(legacy.workspaceId) }).toEqual(after);

    // A dropped: every secret opens under B alone, in the API too.
    expect(await openedWith(ringB, tenant)).toEqual(tenant.secrets);
    expect(await openedWith(ringB, legacy)).toEqual(legacy.secrets);
    const afterwards = await startApi({ MASTER_KEY: keyB, PUBLIC_BASE_URL });
    try {
      expect(await twilioCallback(afterwards.url, legacy)).toBe(200);
      // Links signed with A verify only while A is in the ring (README: keep it in MASTER_KEY_PREVIOUS unless it leaked).
      expect((await fetch(`${afterwards.url}${tenant.unsubscribeLink}`)).status).toBe(404);
    } finally {
      await afterwards.close();
    }
  });

  it('a sealed value copied into another workspace\'s row does not open there, and the re-seal reports it instead of moving it', async () => {
    const victim = await tenantUnderKeyA();
    const thief = await tenantUnderKeyA();
    await db.query('UPDATE twilio_integrations SET auth_token_sealed = (SELECT auth_token_sealed FROM twilio_integrations WHERE workspace_id = $1) WHERE workspace_id = $2', {
      bind: [victim.workspaceId, thief.workspaceId],
    });
    await expect(openedWith(ringA, thief)).rejects.toThrow();
    const api = await startApi({ MASTER_KEY: keyA, PUBLIC_BASE_URL });
    try {
      // Signed with the victim's token, aimed at the thief's workspace: the moved value does not open there.
      expect(await twilioCallback(api.url, { ...thief, secrets: victim.secrets })).not.toBe(200);
    } finally {
      await api.close();
    }
    const reports = await resealSecrets(db, keyringOf(parseMasterKey(keyB), parseMasterKey(keyA)), { batchSize: 50 });
    const twilio = reports.find((report) => report.column === 'twilio_integrations.auth_token_sealed');
    expect(twilio?.failed.filter((failure) => failure.workspaceId === thief.workspaceId)).toHaveLength(1);
  });

  it('a secret saved through the API between the re-seal\'s read and its write is left as saved', async () => {
    const tenant = await tenantUnderKeyA();
    const spec = SEALED_COLUMNS.find((column) => column.context === 'twilio_integrations.auth_token');
    if (!spec) throw new Error('no twilio column');
    const read = (await findValuesToReseal(db, spec, `v2:${rotated.current.id}:`, null, 10_000)).filter((value) => value.workspaceId === tenant.workspaceId);
    expect(read).toHaveLength(1);
    const context = { workspaceId: tenant.workspaceId, column: 'twilio_integrations.auth_token' } as const;
    const savedMeanwhile = sealSecret(rotated, context, 'a token saved meanwhile');
    await db.query('UPDATE twilio_integrations SET auth_token_sealed = $2 WHERE workspace_id = $1', { bind: [tenant.workspaceId, savedMeanwhile] });
    expect(await replaceSealedValues(db, spec, [{ value: read[0], resealed: resealSecret(rotated, context, read[0].sealed) }])).toBe(0);
    expect((await storedValues(tenant.workspaceId))['twilio_integrations.auth_token_sealed']).toBe(savedMeanwhile);
  });
});
