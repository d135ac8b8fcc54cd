import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { generateApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import { canDelegate, FULL_ACCESS, type Grant } from '../../core/scopes';
import { publishKeyRevocation } from '../../db/key-revocations';
import { type ApiKeyRecord, findActiveApiKey, insertApiKey, listApiKeys, revokeApiKey } from '../../db/repositories/api-keys';

export interface IssuedKey {
  record: ApiKeyRecord;
  secret: string;
}

/** Creates a key; the secret exists only in the return value. Used by the API and the admin CLI. */
export async function issueApiKey(
  db: Sequelize,
  workspaceId: string,
  input: { name?: string | null; scopes?: readonly Grant[] },
): Promise<IssuedKey> {
  const generated = generateApiKey();
  const scopes: Grant[] = [...new Set<Grant>(input.scopes ?? [FULL_ACCESS])];
  const record = await insertApiKey(db, workspaceId, {
    name: input.name ?? null,
    hash: generated.hash,
    displayPrefix: generated.displayPrefix,
    scopes: scopes.includes(FULL_ACCESS) ? [FULL_ACCESS] : scopes,
  });
  return { record, secret: generated.key };
}

export interface ApiKeyServiceDeps {
  db: Sequelize;
  redis: Redis;
  evictLocally: (keyHash: string) => void;
}

/**
 * A key sees and revokes only keys it could have created: those whose scopes it holds (a full-access key,
 * every key). A broader key is hidden like another workspace's, so a narrow `keys:write` key can neither
 * list nor revoke the full-access keys it might otherwise lock the owner out with.
 */
const within = (heldScopes: readonly Grant[], key: ApiKeyRecord) => canDelegate(heldScopes, key.scopes);

const SELF_REVOCATION = 'A key cannot revoke itself: revoke it with another key that holds its scopes, or with `npm run admin -- key:revoke --id KEY_ID`';

export function createApiKeyService({ db, redis, evictLocally }: ApiKeyServiceDeps) {
  return {
    list: async (workspaceId: string, heldScopes: readonly Grant[]) =>
      (await listApiKeys(db, workspaceId)).filter((key) => within(heldScopes, key)),

    async create(workspaceId: string, heldScopes: readonly Grant[], input: { name?: string; scopes?: Grant[] }) {
      const requested = input.scopes ?? [FULL_ACCESS];
      if (!canDelegate(heldScopes, requested)) {
        throw new AppError('forbidden', 'A key can only create keys with scopes it holds', {
          need: requested.filter((scope) => !canDelegate(heldScopes, [scope])).join('|'),
        });
      }
      return issueApiKey(db, workspaceId, { name: input.name, scopes: requested });
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
