import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { generateApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import { canDelegate, FULL_ACCESS, type Grant } from '../../core/scopes';
import { publishKeyRevocation } from '../../db/key-revocations';
import type { PlanName } from '../../core/plans';
import { type ApiKeyRecord, findActiveApiKey, insertApiKey, insertApiKeyWithin, listApiKeys, type NewApiKey, revokeApiKey } from '../../db/repositories/api-keys';

export interface IssuedKey {
  record: ApiKeyRecord;
  secret: string;
}

/** The cap on a workspace's active keys, and the plan its refusal names. */
export interface KeyCap {
  max: number;
  plan: PlanName;
}

/**
 * Creates a key; the secret exists only in the return value. Used by the API, with the workspace's cap (each
 * key brings its own rate limit, so keys made without end would multiply a workspace's share of the API),
 * and by the admin CLI, without: operators may go past it deliberately.
 */
export async function issueApiKey(
  db: Sequelize,
  workspaceId: string,
  input: { name?: string | null; scopes?: readonly Grant[] },
  cap?: KeyCap,
): Promise<IssuedKey> {
  const generated = generateApiKey();
  const scopes: Grant[] = [...new Set<Grant>(input.scopes ?? [FULL_ACCESS])];
  const key: NewApiKey = {
    name: input.name ?? null,
    hash: generated.hash,
    displayPrefix: generated.displayPrefix,
    scopes: scopes.includes(FULL_ACCESS) ? [FULL_ACCESS] : scopes,
  };
  if (!cap) return { record: await insertApiKey(db, workspaceId, key), secret: generated.key };
  const outcome = await insertApiKeyWithin(db, workspaceId, key, cap.max);
  if ('refused' in outcome) {
    const { used } = outcome.refused;
    throw new AppError('quota_exceeded', `This workspace already has ${used} active API keys, the most it may hold; revoke one first`, {
      resource: 'api_keys',
      limit: cap.max,
      used,
      remaining: 0,
      plan: cap.plan,
    });
  }
  return { record: outcome.record, secret: generated.key };
}

export interface ApiKeyServiceDeps {
  db: Sequelize;
  redis: Redis;
  evictLocally: (keyHash: string) => void;
  /** Active keys a workspace may hold (MAX_API_KEYS_PER_WORKSPACE). */
  maxKeys: number;
}

/**
 * A key sees and revokes only keys it could have created: those whose scopes it holds (a full-access key,
 * every key). A broader key is hidden like another workspace's, so a narrow `keys:write` key can neither
 * list nor revoke the full-access keys it might otherwise lock the owner out with.
 */
const within = (heldScopes: readonly Grant[], key: ApiKeyRecord) => canDelegate(heldScopes, key.scopes);

const SELF_REVOCATION = 'A key cannot revoke itself: revoke it with another key that holds its scopes, or with `npm run admin -- key:revoke --id KEY_ID`';

export function createApiKeyService({ db, redis, evictLocally, maxKeys }: ApiKeyServiceDeps) {
  return {
    list: async (workspaceId: string, heldScopes: readonly Grant[]) =>
      (await listApiKeys(db, workspaceId)).filter((key) => within(heldScopes, key)),

    async create(caller: { workspaceId: string; scopes: readonly Grant[]; plan: PlanName }, input: { name?: string; scopes?: Grant[] }) {
      const { workspaceId, scopes: heldScopes } = caller;
      const requested = input.scopes ?? [FULL_ACCESS];
      if (!canDelegate(heldScopes, requested)) {
        throw new AppError('forbidden', 'A key can only create keys with scopes it holds', {
          need: requested.filter((scope) => !canDelegate(heldScopes, [scope])).join('|'),
        });
      }
      return issueApiKey(db, workspaceId, { name: input.name, scopes: requested }, { max: maxKeys, plan: caller.plan });
    },

    /** The calling key's own record; it authenticated a moment ago, so only a revocation in between misses it. */
    async current(caller: { workspaceId: string; keyId: string }): Promise<ApiKeyRecord> {
      const key = await findActiveApiKey(db, caller.workspaceId, caller.keyId);
      if (!key) throw new AppError('unauthorized', 'Invalid or revoked API key');
      return key;
    },

    async revoke(caller: { workspaceId: string; keyId: string; scopes: readonly Grant[] }, keyId: string): Promise<void> {
      const { workspaceId } = caller;
      // Scopes never change once a key exists, so what is checked here still holds at the update.
      const key = await findActiveApiKey(db, workspaceId, keyId);
      if (!key || !within(caller.scopes, key)) throw AppError.notFound('API key');
      // A key that revoked itself would lock its holder out mid-session (and a last full-access key would leave
      // the workspace with no way back in through the API): another key, or the admin CLI, revokes it.
      if (key.id === caller.keyId) throw new AppError('conflict', SELF_REVOCATION);
      const keyHash = await revokeApiKey(db, workspaceId, keyId);
      if (!keyHash) throw AppError.notFound('API key');
      evictLocally(keyHash);
      await publishKeyRevocation(redis, keyHash);
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
