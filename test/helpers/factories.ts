import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { issueApiKey } from '../../api/api-keys/service';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import { keyringOf, parseMasterKey, sealSecret } from '../../core/secrets';
import { insertDomain, saveDomainCheck } from '../../db/repositories/domains';
import { periodKey, PLANS, type PlanName, usagePeriodAt } from '../../core/plans';
import { acceptMessages } from '../../db/repositories/message-acceptance';
import type { MessageKind, NewMessage } from '../../db/repositories/messages';
import { FULL_ACCESS, type Grant } from '../../core/scopes';
import { insertWorkspace } from '../../db/repositories/workspaces';

export interface TestWorkspace {
  workspaceId: string;
  apiKey: string;
  keyId: string;
}

/** A fresh workspace with one key, so tests never share state and never need to clean up. */
export async function createWorkspace(
  db: Sequelize,
  options: { plan?: PlanName; scopes?: Grant[]; name?: string } = {},
): Promise<TestWorkspace> {
  const workspace = await insertWorkspace(db, { name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const key = await issueApiKey(db, workspace.id, { name: 'test', scopes: options.scopes ?? [FULL_ACCESS] });
  return { workspaceId: workspace.id, apiKey: key.secret, keyId: key.record.id };
}

export async function createKey(db: Sequelize, workspaceId: string, scopes: Grant[]): Promise<{ apiKey: string; keyId: string }> {
  const key = await issueApiKey(db, workspaceId, { name: 'test', scopes });
  return { apiKey: key.secret, keyId: key.record.id };
}

/** Adds a verified sending domain (with its own DKIM key) to the workspace; returns its name. */
export async function createVerifiedDomain(
  db: Sequelize,
  workspaceId: string,
  masterKey: string,
  options: { defaultFromName?: string; region?: string } = {},
): Promise<string> {
  const name = `mail-${randomUUID().slice(0, 8)}.example.com`;
  const keys = await generateDkimKeyPair();
  const claim = await insertDomain(db, workspaceId, {
    name,
    region: options.region ?? 'us-east-1',
    defaultFromName: options.defaultFromName ?? null,
    dkimSelector: keys.selector,
    dkimPublicKey: keys.publicKey,
    dkimPrivateKeySealed: sealSecret(keyringOf(parseMasterKey(masterKey)), { workspaceId, column: 'domains.dkim_private_key', row: name }, keys.privateKeyPem),
  });
  if (!('created' in claim)) throw new Error('domain name clash');
  await saveDomainCheck(db, workspaceId, claim.created.id, { status: 'verified', detail: null, recordChecks: [] });
  return name;
}

/**
 * Accepts `count` messages of a kind straight into the outbox, as campaigns and journeys will: what the
 * delivery engine sees of a bulk send before those features exist. Returns their ids in order.
 */
export async function queueMessages(
  db: Sequelize,
  workspaceId: string,
  options: { kind: MessageKind; count: number; from: string; campaignId?: string; toPrefix?: string },
): Promise<string[]> {
  const period = usagePeriodAt(new Date());
  const messages: NewMessage[] = Array.from({ length: options.count }, (_, i) => ({
    id: randomUUID(),
    kind: options.kind,
    channel: 'email',
    idempotencyKey: `queued-${randomUUID()}`,
    requestHash: 'test',
    fromAddress: options.from,
    to: [`${options.toPrefix ?? options.kind}-${i}@example.org`],
    cc: [],
    bcc: [],
    subject: `${options.kind} ${i}`,
    content: { text: 'Hello' },
    templateId: null,
    campaignId: options.campaignId ?? null,
    quotaUnits: 1,
    quotaPeriod: periodKey(period),
    droppedRecipients: [],
  }));
  for (let i = 0; i < messages.length; i += 1_000) {
    await acceptMessages(db, workspaceId, { plan: PLANS.pro, period }, messages.slice(i, i + 1_000));
  }
  return messages.map((message) => message.id);
}
