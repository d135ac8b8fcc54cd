import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { generateApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import { canDelegate, FULL_ACCESS, type Grant } from '../../core/scopes';
import { publishKeyRevocation } from '../../db/key-revocations';
import { type ApiKeyRecord, insertApiKey, listApiKeys, revokeApiKey } from '../../db/repositories/api-keys';

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

export function createApiKeyService({ db, redis, evictLocally }: ApiKeyServiceDeps) {
  return {
    list: (workspaceId: string) => listApiKeys(db, workspaceId),

    async create(workspaceId: string, heldScopes: readonly Grant[], input: { name?: string; scopes?: Grant[] }) {
      const requested = input.scopes ?? [FULL_ACCESS];
      if (!canDelegate(heldScopes, requested)) {
        throw new AppError('forbidden', 'A key can only create keys with scopes it holds', {
          need: requested.filter((scope) => !canDelegate(heldScopes, [scope])).join('|'),
        });
      }
      return issueApiKey(db, workspaceId, { name: input.name, scopes: requested });
    },

    async revoke(workspaceId: string, keyId: string): Promise<void> {
      const keyHash = await revokeApiKey(db, workspaceId, keyId);
      if (!keyHash) throw AppError.notFound('API key');
      evictLocally(keyHash);
      await publishKeyRevocation(redis, keyHash);
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
