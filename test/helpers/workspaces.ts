import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { issueApiKey } from '../../api/api-keys/service';
import { loadConfig } from '../../core/config';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import type { PlanName } from '../../core/plans';
import { FULL_ACCESS, type Grant } from '../../core/scopes';
import { keyringOf, parseMasterKey, sealSecret } from '../../core/secrets';
import { insertDomain, saveDomainCheck } from '../../db/repositories/domains';
import { insertWorkspace } from '../../db/repositories/workspaces';
import type { ApiHarness, ApiResponse } from './api-harness';

/**
 * The one way an integration test gets a tenant: `createTestWorkspace(host, options)` makes a fresh
 * workspace (so tests never share state and never clean up), a key with the scopes asked and, when asked,
 * a verified sending domain with its own DKIM key. Written straight to the database through the
 * repositories: setting up is not what these tests test, and the API's rate limit stays out of the way.
 *
 * The host is where the test's state lives: the API harness (then the result carries a caller with the
 * key), an email or chat stack (its API), or a bare database (a test of repositories or of a worker alone).
 */
export type WorkspaceHost = Sequelize | ApiHarness | { api: ApiHarness };

export interface DomainOptions {
  defaultFromName?: string;
  region?: string;
  /** Seal its DKIM key under this master key rather than the host's (a key-rotation test, a benchmark's own). */
  masterKey?: string;
}

export interface WorkspaceOptions {
  plan?: PlanName;
  /** The key's grants; full access when not given. */
  scopes?: Grant[];
  name?: string;
  /** A verified sending domain: `true`, or its default From name and SES region. */
  domain?: boolean | DomainOptions;
}

export interface TestWorkspace {
  workspaceId: string;
  apiKey: string;
  keyId: string;
}

export interface TestDomain {
  /** The domain's name (`mail-<random>.example.com`): send from any address at it. */
  domain: string;
  domainId: string;
}

/** A caller under `/api/v1` with the key: `call('GET', '/contacts')`. */
export type Caller = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

type WithDomain = { domain: true | DomainOptions };
type ApiHost = ApiHarness | { api: ApiHarness };

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

export async function createTestWorkspace(host: ApiHost, options: WorkspaceOptions & WithDomain): Promise<TestWorkspace & TestDomain & { call: Caller }>;
export async function createTestWorkspace(host: ApiHost, options?: WorkspaceOptions): Promise<TestWorkspace & { call: Caller }>;
export async function createTestWorkspace(host: Sequelize, options: WorkspaceOptions & WithDomain): Promise<TestWorkspace & TestDomain>;
export async function createTestWorkspace(host: Sequelize, options?: WorkspaceOptions): Promise<TestWorkspace>;
export async function createTestWorkspace(host: WorkspaceHost, options: WorkspaceOptions = {}): Promise<TestWorkspace & Partial<TestDomain> & { call?: Caller }> {
  const db = databaseOf(host);
  const workspace = await insertWorkspace(db, { name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const key = await issueTestKey(host, workspace.id, options.scopes ?? [FULL_ACCESS]);
  const domain = options.domain ? await addVerifiedDomain(host, workspace.id, options.domain === true ? {} : options.domain) : {};
  return { workspaceId: workspace.id, ...key, ...domain };
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

/** Adds a verified sending domain (with its own DKIM key) to a workspace that has one already or needs several. */
export async function addVerifiedDomain(host: WorkspaceHost, workspaceId: string, options: DomainOptions = {}): Promise<TestDomain> {
  const db = databaseOf(host);
  const name = `mail-${randomUUID().slice(0, 8)}.example.com`;
  const keys = await generateDkimKeyPair();
  const claim = await insertDomain(db, workspaceId, {
    name,
    region: options.region ?? 'us-east-1',
    defaultFromName: options.defaultFromName ?? null,
    dkimSelector: keys.selector,
    dkimPublicKey: keys.publicKey,
    dkimPrivateKeySealed: sealSecret(keyringOf(parseMasterKey(options.masterKey ?? masterKeyOf(host))), { workspaceId, column: 'domains.dkim_private_key', row: name }, keys.privateKeyPem),
  });
  if (!('created' in claim)) throw new Error('domain name clash');
  await saveDomainCheck(db, workspaceId, claim.created.id, { status: 'verified', detail: null, recordChecks: [] });
  return { domain: name, domainId: claim.created.id };
}
