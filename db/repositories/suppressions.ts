import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { type Channel, normaliseAddress } from '../../core/identities';
import type { SuppressionReason } from '../../core/suppressions';
import { withdrawConsent } from './contact-identities';

export interface SuppressionRecord {
  channel: Channel;
  address: string;
  reason: SuppressionReason;
  /** What the provider said when a delivery refusal added it (migration 0033); null otherwise. */
  detail: string | null;
  /** The message whose refusal added it; null otherwise. */
  messageId: string | null;
  createdAt: Date;
}

interface SuppressionRow {
  channel: Channel;
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  message_id: string | null;
  created_at: Date;
}

const toSuppression = (row: SuppressionRow): SuppressionRecord => ({
  channel: row.channel,
  address: row.address,
  reason: row.reason,
  detail: row.detail ?? null,
  messageId: row.message_id ?? null,
  createdAt: row.created_at,
});

/**
 * Which of these addresses the workspace must not message, and why. Addresses are matched in their
 * normalised form (`Ann@Example.com` finds `ann@example.com`); the map is keyed by the addresses as
 * given. Addresses that are not valid on the channel are never suppressed.
 */
export async function findSuppressed(
  db: Sequelize,
  workspaceId: string,
  channel: Channel,
  addresses: readonly string[],
  transaction?: Transaction,
): Promise<Map<string, SuppressionReason>> {
  const lookup = suppressionLookup(channel, addresses);
  if (lookup.normalised.length === 0) return new Map();
  const rows = await db.query<{ address: string; reason: SuppressionReason }>(
    `SELECT address, reason FROM suppressions WHERE ${SUPPRESSED_AMONG('$1', '$2', '$3')}`,
    { bind: [workspaceId, channel, lookup.normalised], type: QueryTypes.SELECT, transaction },
  );
  return lookup.byGiven(rows);
}

/**
 * The condition "suppressed in this workspace on this channel, among these addresses", given the three
 * parameters. The workspace is compared as text on purpose, so that no index led by the workspace can
 * serve it: the planner must probe the address index (migration 0007) once per address, whatever its
 * statistics say about the workspace.
 */
export const SUPPRESSED_AMONG = (workspace: string, channel: string, addresses: string): string =>
  `address = ANY(${addresses}::text[]) AND channel = ${channel} AND workspace_id::text = ${workspace}::text`;

/**
 * The addresses to look up (normalised, distinct) and how to key the rows found by the addresses as
 * given; for queries that read suppressions together with something else.
 */
export function suppressionLookup(channel: Channel, addresses: readonly string[]) {
  const normalisedOf = new Map<string, string>();
  for (const address of addresses) {
    const normalised = normaliseAddress(channel, address);
    if (normalised.ok) normalisedOf.set(address, normalised.address);
  }
  return {
    normalised: [...new Set(normalisedOf.values())],
    byGiven(rows: ReadonlyArray<{ address: string; reason: SuppressionReason }>): Map<string, SuppressionReason> {
      const reasonOf = new Map(rows.map((row) => [row.address, row.reason]));
      const found = new Map<string, SuppressionReason>();
      for (const [given, normalised] of normalisedOf) {
        const reason = reasonOf.get(normalised);
        if (reason) found.set(given, reason);
      }
      return found;
    },
  };
}

/**
 * Suppresses a normalised address. The first reason stays: a complaint after an unsubscribe is still
 * the unsubscribe. Returns the row as stored and whether this call created it.
 */
export async function addSuppression(
  db: Sequelize,
  workspaceId: string,
  entry: { channel: Channel; address: string; reason: SuppressionReason },
  transaction?: Transaction,
): Promise<{ suppression: SuppressionRecord; created: boolean }> {
  const inserted = await db.query<SuppressionRow>(
    `INSERT INTO suppressions (workspace_id, channel, address, reason) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id, channel, address) DO NOTHING RETURNING *`,
    { bind: [workspaceId, entry.channel, entry.address, entry.reason], type: QueryTypes.SELECT, transaction },
  );
  if (inserted[0]) return { suppression: toSuppression(inserted[0]), created: true };
  const existing = await db.query<SuppressionRow>(
    'SELECT * FROM suppressions WHERE workspace_id = $1 AND channel = $2 AND address = $3',
    { bind: [workspaceId, entry.channel, entry.address], type: QueryTypes.SELECT, transaction },
  );
  return { suppression: toSuppression(existing[0]), created: false };
}

/**
 * Suppresses addresses as delivery events report them (a hard bounce, a complaint, an unsubscribe),
 * normalising each; invalid addresses are skipped and earlier reasons kept. Returns how many are new.
 */
export async function suppressAddresses(
  db: Sequelize,
  workspaceId: string,
  channel: Channel,
  addresses: readonly string[],
  reason: SuppressionReason,
  transaction?: Transaction,
): Promise<number> {
  const normalised = [
    ...new Set(addresses.flatMap((address) => {
      const result = normaliseAddress(channel, address);
      return result.ok ? [result.address] : [];
    })),
  ];
  if (normalised.length === 0) return 0;
  const rows = await db.query(
    `INSERT INTO suppressions (workspace_id, channel, address, reason)
     SELECT $1, $2, address, $4 FROM unnest($3::text[]) AS suppressed (address)
     ON CONFLICT (workspace_id, channel, address) DO NOTHING RETURNING address`,
    { bind: [workspaceId, channel, normalised, reason], type: QueryTypes.SELECT, transaction },
  );
  return rows.length;
}

/**
 * Suppresses the recipient a provider refused for good (a blocked bot, a STOP reply, a number that does not
 * exist), keeping the provider's words and the message, and, for an opt-out, marks the identity owning it
 * `opted_out` as an unsubscribe does (decisions: unsubscribes suppress). An earlier suppression keeps its
 * reason. Returns whether this call added it.
 */
export async function suppressRefusedRecipient(
  db: Sequelize,
  workspaceId: string,
  refused: { channel: Channel; address: string; reason: SuppressionReason; detail: string; messageId: string },
  outer?: Transaction,
): Promise<boolean> {
  const normalised = normaliseAddress(refused.channel, refused.address);
  if (!normalised.ok) return false;
  const work = async (transaction: Transaction) => {
    const rows = await db.query(
      `INSERT INTO suppressions (workspace_id, channel, address, reason, detail, message_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (workspace_id, channel, address) DO NOTHING RETURNING address`,
      { bind: [workspaceId, refused.channel, normalised.address, refused.reason, refused.detail, refused.messageId], type: QueryTypes.SELECT, transaction },
    );
    if (refused.reason === 'unsubscribed') await withdrawConsent(db, workspaceId, refused.channel, normalised.address, transaction);
    return rows.length === 1;
  };
  return outer ? work(outer) : db.transaction(work);
}

/** An erased contact's addresses: `erased` replaces any earlier reason, since it is what blocks a re-add. */
export async function suppressErased(
  db: Sequelize,
  workspaceId: string,
  identities: ReadonlyArray<{ channel: Channel; address: string }>,
  transaction: Transaction,
): Promise<void> {
  if (identities.length === 0) return;
  await db.query(
    `INSERT INTO suppressions (workspace_id, channel, address, reason)
     SELECT $1, channel, address, 'erased' FROM unnest($2::text[], $3::text[]) AS erased (channel, address)
     ON CONFLICT (workspace_id, channel, address) DO UPDATE SET reason = 'erased'`,
    {
      bind: [workspaceId, identities.map((identity) => identity.channel), identities.map((identity) => identity.address)],
      transaction,
    },
  );
}

/**
 * The suppressions of these identities (normalised addresses, as contact identities store them), keyed
 * `<channel>:<address>`: what a contact's detail shows beside each identity.
 */
export async function suppressionsOf(
  db: Sequelize,
  workspaceId: string,
  identities: ReadonlyArray<{ channel: Channel; address: string }>,
): Promise<Map<string, SuppressionRecord>> {
  if (identities.length === 0) return new Map();
  const rows = await db.query<SuppressionRow>(
    `SELECT s.* FROM suppressions s JOIN unnest($2::text[], $3::text[]) AS wanted (channel, address)
       ON s.channel = wanted.channel AND s.address = wanted.address
     WHERE s.workspace_id = $1`,
    { bind: [workspaceId, identities.map((identity) => identity.channel), identities.map((identity) => identity.address)], type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [`${row.channel}:${row.address}`, toSuppression(row)]));
}

export async function listSuppressions(
  db: Sequelize,
  workspaceId: string,
  filters: { channel?: Channel; reason?: SuppressionReason; limit: number; offset: number },
): Promise<{ rows: SuppressionRecord[]; total: number }> {
  const where = 'workspace_id = $1 AND ($2::text IS NULL OR channel = $2) AND ($3::text IS NULL OR reason = $3)';
  const bind = [workspaceId, filters.channel ?? null, filters.reason ?? null];
  const [rows, counted] = await Promise.all([
    db.query<SuppressionRow>(`SELECT * FROM suppressions WHERE ${where} ORDER BY created_at DESC, address LIMIT $4 OFFSET $5`, {
      bind: [...bind, filters.limit, filters.offset],
      type: QueryTypes.SELECT,
    }),
    db.query<{ total: string }>(`SELECT count(*) AS total FROM suppressions WHERE ${where}`, { bind, type: QueryTypes.SELECT }),
  ]);
  return { rows: rows.map(toSuppression), total: Number(counted[0].total) };
}

/** Lifts the suppression of an address on each given channel; returns the rows removed. */
export async function deleteSuppressions(
  db: Sequelize,
  workspaceId: string,
  candidates: ReadonlyArray<{ channel: Channel; address: string }>,
): Promise<SuppressionRecord[]> {
  if (candidates.length === 0) return [];
  const rows = await db.query<SuppressionRow>(
    `DELETE FROM suppressions s USING unnest($2::text[], $3::text[]) AS wanted (channel, address)
     WHERE s.workspace_id = $1 AND s.channel = wanted.channel AND s.address = wanted.address RETURNING s.*`,
    {
      bind: [workspaceId, candidates.map((candidate) => candidate.channel), candidates.map((candidate) => candidate.address)],
      type: QueryTypes.SELECT,
    },
  );
  return rows.map(toSuppression);
}
