import { LRUCache } from 'lru-cache';
import { Client } from 'pg';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { EmailRule } from '../../core/inbox/rules';
import { findMailbox, listEmailRules, type MailboxLookup } from '../../db/repositories/inbox-mail';
import { inboundStorageUsed, type InboundStorage } from '../../db/repositories/inbox-storage';

/** The channel of migration 0029's triggers; payloads `domain:<name>` and `rules:<workspaceId>`. */
const CHANNEL = 'inbound_recipients';
/** Storage moves with every message and is read fresh before each 250; at RCPT a few seconds' lag is fine. */
const STORAGE_TTL_MS = 5_000;
const RECONNECT_MAX_MS = 10_000;

interface Entry {
  value: MailboxLookup | EmailRule[] | InboundStorage;
  /** The scope's generation and the directory's epoch when the lookup began: a change since makes it stale. */
  generation: number;
  epoch: number;
}

/**
 * Who a recipient is, a workspace's rules and its storage, as the listener asks at every RCPT, cached in an
 * LRU with a TTL so a flood of RCPTs (most of them to addresses that do not exist) does not become a flood of
 * queries. Misses are cached too. Invalidation: PostgreSQL NOTIFY from triggers on `domains`, `inboxes` and
 * `email_rules` (migration 0029), chosen over a Redis publish from the API because it reaches us from every
 * writer (the API, the domain-verification workflow, an operator's SQL), and only once the change is
 * committed, so a lookup can never re-read and re-cache the old row between a publish and its commit. The
 * cache is trusted only while that subscription is up (`listenForRecipientChanges`); without it every
 * lookup reads the database. The TTL bounds what a lost notification could leave behind.
 */
export class RecipientDirectory {
  private readonly entries: LRUCache<string, Entry>;
  private readonly generations = new Map<string, number>();
  private epoch = 0;
  /** Set by `listenForRecipientChanges` while its LISTEN connection is up. */
  subscribed = false;

  constructor(private readonly db: Sequelize, private readonly ttlMs: number, max = 100_000) {
    this.entries = new LRUCache({ max, ttl: Math.max(ttlMs, 1), ttlAutopurge: false });
  }

  mailbox(localPart: string, domain: string): Promise<MailboxLookup> {
    return this.cached(`domain:${domain}`, `mailbox:${localPart.toLowerCase()}@${domain}`, this.ttlMs, () => findMailbox(this.db, localPart, domain));
  }

  rules(workspaceId: string): Promise<EmailRule[]> {
    return this.cached(`rules:${workspaceId}`, `rules:${workspaceId}`, this.ttlMs, () => listEmailRules(this.db, workspaceId));
  }

  storage(workspaceId: string): Promise<InboundStorage> {
    return this.cached(`storage:${workspaceId}`, `storage:${workspaceId}`, Math.min(this.ttlMs, STORAGE_TTL_MS), () => inboundStorageUsed(this.db, workspaceId));
  }

  /** A notification's payload: everything cached under that domain or workspace is stale from now on. */
  invalidate(scope: string): void {
    this.generations.set(scope, (this.generations.get(scope) ?? 0) + 1);
  }

  /** Everything is stale (the subscription was lost and what it missed is unknown). */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
    this.generations.clear();
  }

  private async cached<V extends Entry['value']>(scope: string, key: string, ttl: number, lookup: () => Promise<V>): Promise<V> {
    const generation = this.generations.get(scope) ?? 0;
    const epoch = this.epoch;
    if (this.subscribed && ttl > 0) {
      const entry = this.entries.get(key);
      if (entry && entry.generation === generation && entry.epoch === epoch) return entry.value as V;
    }
    const value = await lookup();
    if (ttl > 0) this.entries.set(key, { value, generation, epoch }, { ttl });
    return value;
  }
}

/**
 * Keeps a LISTEN connection open for the directory's invalidations, reconnecting with backoff. Each
 * (re)connection clears the cache first: notifications sent while it was down are gone.
 */
export function listenForRecipientChanges(databaseUrl: string, directory: RecipientDirectory, logger: Logger): { close: () => Promise<void> } {
  let client: Client | null = null;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  const lost = (error?: Error) => {
    directory.subscribed = false;
    const gone = client;
    client = null;
    gone?.removeAllListeners();
    gone?.end().catch(() => undefined);
    if (closed) return;
    if (error) logger.warn({ err: error }, 'inbound recipient cache: change notifications lost; reading the database until they are back');
    attempt += 1;
    timer = setTimeout(connect, Math.min(attempt * 500, RECONNECT_MAX_MS));
  };

  const connect = () => {
    const next = new Client({ connectionString: databaseUrl });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload) directory.invalidate(message.payload);
    });
    next.on('error', (error) => lost(error));
    next.on('end', () => client === next && lost(new Error('LISTEN connection ended')));
    next.connect()
      .then(() => next.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        if (client !== next) return;
        directory.clear();
        directory.subscribed = true;
        attempt = 0;
      })
      .catch((error: Error) => client === next && lost(error));
  };

  connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      directory.subscribed = false;
      const open = client;
      client = null;
      open?.removeAllListeners();
      await open?.end().catch(() => undefined);
    },
  };
}
