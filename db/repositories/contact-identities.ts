import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { IdentityChange, StoredIdentity } from '../../core/contact-upsert';
import type { Channel, Consent } from '../../core/identities';

export interface IdentityRecord extends StoredIdentity {
  contactId: string;
}

interface IdentityRow {
  contact_id: string;
  channel: Channel;
  address: string;
  consent: Consent;
  verified: boolean;
  is_primary: boolean;
}

const toIdentity = (row: IdentityRow): IdentityRecord => ({
  contactId: row.contact_id,
  channel: row.channel,
  address: row.address,
  consent: row.consent,
  verified: row.verified,
  isPrimary: row.is_primary,
});

/** Which contacts own these addresses (each address has at most one owner: the natural key). */
export async function findIdentityOwners(
  db: Sequelize,
  workspaceId: string,
  identities: ReadonlyArray<{ channel: Channel; address: string }>,
  transaction?: Transaction,
): Promise<IdentityRecord[]> {
  const rows = await db.query<IdentityRow>(
    `SELECT i.* FROM contact_identities i
     JOIN unnest($2::text[], $3::text[]) AS wanted (channel, address)
       ON i.channel = wanted.channel AND i.address = wanted.address
     WHERE i.workspace_id = $1`,
    {
      bind: [workspaceId, identities.map((identity) => identity.channel), identities.map((identity) => identity.address)],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.map(toIdentity);
}

/** Identities of several contacts, primary first within a channel, then oldest first. */
export async function identitiesOf(
  db: Sequelize,
  workspaceId: string,
  contactIds: readonly string[],
  transaction?: Transaction,
): Promise<IdentityRecord[]> {
  if (contactIds.length === 0) return [];
  const rows = await db.query<IdentityRow>(
    `SELECT * FROM contact_identities WHERE workspace_id = $1 AND contact_id = ANY($2::uuid[])
     ORDER BY channel, is_primary DESC, created_at, address`,
    { bind: [workspaceId, contactIds], type: QueryTypes.SELECT, transaction },
  );
  return rows.map(toIdentity);
}

/**
 * Inserts new identities; an address that another contact took in the meantime is skipped, and the
 * caller compares the count to retry. ON CONFLICT waits for the other transaction to finish, so
 * two simultaneous upserts of one new address cannot both succeed.
 */
export async function insertIdentities(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  identities: readonly StoredIdentity[],
  transaction: Transaction,
): Promise<number> {
  if (identities.length === 0) return 0;
  const rows = await db.query<{ address: string }>(
    `INSERT INTO contact_identities (workspace_id, contact_id, channel, address, consent, verified, is_primary)
     SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::text[], $6::boolean[], $7::boolean[])
     ON CONFLICT (workspace_id, channel, address) DO NOTHING
     RETURNING address`,
    {
      bind: [
        workspaceId,
        contactId,
        identities.map((identity) => identity.channel),
        identities.map((identity) => identity.address),
        identities.map((identity) => identity.consent),
        identities.map((identity) => identity.verified),
        identities.map((identity) => identity.isPrimary),
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.length;
}

export async function demoteIdentities(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  identities: ReadonlyArray<{ channel: Channel; address: string }>,
  transaction: Transaction,
): Promise<void> {
  if (identities.length === 0) return;
  await db.query(
    `UPDATE contact_identities i SET is_primary = false, updated_at = now()
     FROM unnest($3::text[], $4::text[]) AS demoted (channel, address)
     WHERE i.workspace_id = $1 AND i.contact_id = $2 AND i.channel = demoted.channel AND i.address = demoted.address`,
    {
      bind: [workspaceId, contactId, identities.map((identity) => identity.channel), identities.map((identity) => identity.address)],
      transaction,
    },
  );
}

/** Applies only the declared fields of each change; null in a column array means "leave as is". */
export async function updateIdentities(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  changes: readonly IdentityChange[],
  transaction: Transaction,
): Promise<void> {
  if (changes.length === 0) return;
  await db.query(
    `UPDATE contact_identities i SET
       consent = COALESCE(changed.consent, i.consent),
       verified = COALESCE(changed.verified, i.verified),
       is_primary = COALESCE(changed.is_primary, i.is_primary),
       updated_at = now()
     FROM unnest($3::text[], $4::text[], $5::text[], $6::boolean[], $7::boolean[])
       AS changed (channel, address, consent, verified, is_primary)
     WHERE i.workspace_id = $1 AND i.contact_id = $2 AND i.channel = changed.channel AND i.address = changed.address`,
    {
      bind: [
        workspaceId,
        contactId,
        changes.map((change) => change.channel),
        changes.map((change) => change.address),
        changes.map((change) => change.consent ?? null),
        changes.map((change) => change.verified ?? null),
        changes.map((change) => change.isPrimary ?? null),
      ],
      transaction,
    },
  );
}

/**
 * The person withdrew consent for this normalised address themselves (an unsubscribe link): whichever
 * contact owns it is marked `opted_out`. An address no contact owns changes nothing.
 */
export async function withdrawConsent(db: Sequelize, workspaceId: string, channel: Channel, address: string, transaction: Transaction): Promise<void> {
  await db.query(
    `UPDATE contact_identities SET consent = 'opted_out', updated_at = now()
     WHERE workspace_id = $1 AND channel = $2 AND address = $3 AND consent <> 'opted_out'`,
    { bind: [workspaceId, channel, address], transaction },
  );
}
