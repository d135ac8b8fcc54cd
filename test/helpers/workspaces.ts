import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { issueApiKey } from '../../api/api-keys/service';
import { loadConfig } from '../../core/config';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import type { PlanName } from '../../core/plans';
import { FULL_ACCESS, type Grant } from '../../core/scopes';
import { keyringOf, parseMasterKey, sealSecret } from '../../core/secrets';
import { type DomainRecord, insertDomain, saveDomainCheck } from '../../db/repositories/domains';
import { insertWorkspace } from '../../db/repositories/workspaces';
import type { ApiHarness, ApiResponse } from './api-harness';
import { connectTelegram, connectTwilio, type TwilioAccount } from './chat-workspaces';
import type { StandInBot, TelegramStandIn } from './telegram-stand-in';
import type { TwilioStandIn } from './twilio-stand-in';

/**
 * The one way an integration test gets a tenant: `createTestWorkspace(host, options)` makes a fresh
 * workspace (so tests never share state and never clean up), a key with the scopes asked and, when asked,
 * a verified sending domain with its own DKIM key and the chat integrations. The workspace, key and domain
 * are written straight to the database through the repositories (setting up is not what these tests test,
 * and the API's rate limit stays out of the way); the integrations are saved through the API, as a user
 * saves them, so their secrets are checked and sealed the way the product does.
 *
 * The host is where the test's state lives: the API harness (then the result carries a caller with the
 * key), an email or chat stack (its API), or a bare database (a test of repositories or of a worker alone).
 */
export type WorkspaceHost = Sequelize | ApiHost;
type ApiHost = ApiHarness | { api: ApiHarness };

export interface DomainOptions {
  /** `mail-<random>.example.com` unless given. */
  name?: string;
  defaultFromName?: string;
  region?: string;
  /** Verified unless false: a pending domain is what a domain check starts from. */
  verified?: boolean;
  /** Seal its DKIM key under this master key rather than the host's (a key-rotation test, a benchmark's own). */
  masterKey?: string;
}

export interface WorkspaceOptions {
  plan?: PlanName;
  /** The key's grants; full access when not given. */
  scopes?: Grant[];
  name?: string;
  /** A sending domain: `true` for a verified one, or its options. */
  domain?: true | DomainOptions;
}

/** What only an API host can add: integrations saved through the API with the workspace's key. */
export interface ApiWorkspaceOptions extends WorkspaceOptions {
  /** A Twilio account known to this stand-in, saved as the WhatsApp integration (sender WHATSAPP_SENDER). */
  whatsapp?: TwilioStandIn;
  /** A new bot of this stand-in, saved as the Telegram integration. */
  telegram?: TelegramStandIn;
}

export interface TestWorkspace {
  workspaceId: string;
  apiKey: string;
  keyId: string;
}

export interface TestDomain {
  /** The domain's name: send from any address at it. */
  domain: string;
  domainId: string;
  /** The row as inserted (before its check), and its DKIM key's selector and public half (a test that publishes its records). */
  record: DomainRecord;
  dkim: { selector: string; publicKey: string };
}

/** A caller under `/api/v1` with the key: `call('GET', '/contacts')`. */
export type Caller = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

/** What the options asked for, beside the workspace and its key. */
type Extras<O> = (O extends { domain: true | DomainOptions } ? TestDomain : unknown) &
  (O extends { whatsapp: TwilioStandIn } ? { twilio: TwilioAccount } : unknown) &
  (O extends { telegram: TelegramStandIn } ? { bot: StandInBot } : unknown);

function harnessOf(host: WorkspaceHost): ApiHarness | null {
  if ('api' in host) return host.api;
  return 'as' in host ? host : null;
}

function databaseOf(host: WorkspaceHost): Sequelize {
  return harnessOf(host)?.db ?? (host as Sequelize);
}

/** The harness's master key, or the environment's (what a worker on this database seals with). */
function masterKeyOf(host: WorkspaceHost): string {
  return harnessOf(host)?.config.MASTER_KEY ?? loadConfig(process.env).MASTER_KEY;
}

export async function createTestWorkspace<O extends ApiWorkspaceOptions = Record<never, never>>(host: ApiHost, options?: O): Promise<TestWorkspace & { call: Caller } & Extras<O>>;
export async function createTestWorkspace<O extends WorkspaceOptions = Record<never, never>>(host: Sequelize, options?: O): Promise<TestWorkspace & Extras<O>>;
export async function createTestWorkspace(host: WorkspaceHost, options: ApiWorkspaceOptions = {}): Promise<TestWorkspace> {
  const db = databaseOf(host);
  const workspace = await insertWorkspace(db, { name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const key = await issueTestKey(host, workspace.id, options.scopes ?? [FULL_ACCESS]);
  const domain = options.domain ? await addTestDomain(host, workspace.id, options.domain === true ? {} : options.domain) : {};
  const harness = harnessOf(host);
  if ((options.whatsapp || options.telegram) && !harness) throw new Error('integrations are saved through the API: pass the API harness or stack');
  const twilio = options.whatsapp && harness ? { twilio: await connectTwilio(harness, options.whatsapp, key.apiKey) } : {};
  const bot = options.telegram && harness ? { bot: await connectTelegram(harness, options.telegram, key.apiKey) } : {};
  return { workspaceId: workspace.id, ...key, ...domain, ...twilio, ...bot };
}

/** Another key for a workspace, with these scopes (and a caller with it when the host is an API). */
export async function createTestKey(host: ApiHost, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string; call: Caller }>;
export async function createTestKey(host: Sequelize, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string }>;
export async function createTestKey(host: WorkspaceHost, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string; call?: Caller }> {
  return issueTestKey(host, workspaceId, scopes);
}

async function issueTestKey(host: WorkspaceHost, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string; call?: Caller }> {
  const key = await issueApiKey(databaseOf(host), workspaceId, { name: 'test', scopes });
  const harness = harnessOf(host);
  return { apiKey: key.secret, keyId: key.record.id, ...(harness && { call: harness.as(key.secret) }) };
}

/** Adds a sending domain (with its own DKIM key) to a workspace that has one already or needs another kind. */
export async function addTestDomain(host: WorkspaceHost, workspaceId: string, options: DomainOptions = {}): Promise<TestDomain> {
  const db = databaseOf(host);
  const name = options.name ?? `mail-${randomUUID().slice(0, 8)}.example.com`;
  const keys = await generateDkimKeyPair();
  const claim = await insertDomain(db, workspaceId, {
    name,
    region: options.region ?? 'us-east-1',
    defaultFromName: options.defaultFromName ?? null,
    dkimSelector: keys.selector,
    dkimPublicKey: keys.publicKey,
    dkimPrivateKeySealed: sealSecret(keyringOf(parseMasterKey(options.masterKey ?? masterKeyOf(host))), { workspaceId, column: 'domains.dkim_private_key', row: name }, keys.privateKeyPem),
  });
  if (!('created' in claim)) throw new Error(`domain ${name} is taken (${claim.takenBy})`);
  if (options.verified !== false) await saveDomainCheck(db, workspaceId, claim.created.id, { status: 'verified', detail: null, recordChecks: [] });
  return { domain: name, domainId: claim.created.id, record: claim.created, dkim: { selector: keys.selector, publicKey: keys.publicKey } };
}
