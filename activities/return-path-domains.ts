import { LRUCache } from 'lru-cache';
import type { Sequelize } from 'sequelize';
import { returnPathDomainOf } from '../core/bounces/return-path';
import { findDomainByName } from '../db/repositories/domains';

/** A domain's records change rarely (a check every few hours); a minute's lag costs a few bounces' VERP. */
const TTL_MS = 60_000;

/**
 * The return-path domain of a workspace's sending domain (core/bounces/return-path.ts), cached per worker
 * so a campaign's thousands of sends cost one read per domain a minute.
 */
export function returnPathDomains(db: Sequelize): (workspaceId: string, fromDomain: string) => Promise<string | null> {
  const cache = new LRUCache<string, { domain: string | null }>({ max: 10_000, ttl: TTL_MS });
  return async (workspaceId, fromDomain) => {
    const key = `${workspaceId}:${fromDomain.toLowerCase()}`;
    const cached = cache.get(key);
    if (cached) return cached.domain;
    const found = await findDomainByName(db, workspaceId, fromDomain.toLowerCase());
    const domain = found ? returnPathDomainOf(found) : null;
    cache.set(key, { domain });
    return domain;
  };
}
