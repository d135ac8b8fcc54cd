import type { Sequelize, Transaction } from 'sequelize';
import { type AttributePlan, type DeclaredIdentity, planAttributes, planIdentities } from '../core/contact-upsert';
import { fieldsByKey } from '../core/custom-fields';
import { AppError } from '../core/errors';
import { type Channel, CHANNELS, type Consent, normaliseAddress } from '../core/identities';
import {
  demoteIdentities,
  findIdentityOwners,
  identitiesOf,
  insertIdentities,
  updateIdentities,
} from '../db/repositories/contact-identities';
import { insertContact, lockContact, mergeContactAttributes } from '../db/repositories/contacts';
import { listCustomFields } from '../db/repositories/custom-fields';
import { findSuppressed } from '../db/repositories/suppressions';

/**
 * A contact as POST /contacts declares it (api/contacts/schemas.ts validates it); the events API upserts
 * the contact of an email it has never seen through the same use case.
 */
export interface UpsertContactInput {
  identities: Array<{ channel: Channel; address: string; consent?: Consent; verified?: boolean; isPrimary?: boolean }>;
  attributes?: Record<string, unknown>;
}

export interface UpsertOutcome {
  id: string;
  created: boolean;
  identitiesAdded: number;
  warnings: string[];
}

/** A concurrent request took one of our new addresses first; the attempt is rolled back and retried. */
class AddressTaken extends Error {}

/** Unique violation (a primary set concurrently), foreign key (contact erased meanwhile), deadlock. */
const RACE_CODES = new Set(['23505', '23503', '40P01']);
const MAX_ATTEMPTS = 4;

function isRace(error: unknown): boolean {
  if (error instanceof AddressTaken) return true;
  const code = (error as { parent?: { code?: unknown } } | null)?.parent?.code;
  return typeof code === 'string' && RACE_CODES.has(code);
}

/** Normalises every address and refuses, naming the field, what cannot be one identity list. */
function declaredIdentities(input: UpsertContactInput['identities']): DeclaredIdentity[] {
  const fieldErrors: Record<string, string[]> = {};
  const declared: DeclaredIdentity[] = [];
  const firstAt = new Map<string, number>();
  const primaryAt = new Map<string, number>();
  input.forEach((identity, index) => {
    const normalised = normaliseAddress(identity.channel, identity.address);
    if (!normalised.ok) {
      fieldErrors[`identities[${index}].address`] = [normalised.reason];
      return;
    }
    const key = `${identity.channel} ${normalised.address}`;
    const first = firstAt.get(key);
    if (first !== undefined) {
      fieldErrors[`identities[${index}].address`] = [`The same ${identity.channel} address as identities[${first}]`];
      return;
    }
    firstAt.set(key, index);
    if (identity.isPrimary) {
      const other = primaryAt.get(identity.channel);
      if (other !== undefined) fieldErrors[`identities[${index}].isPrimary`] = [`identities[${other}] is already declared primary for ${identity.channel}`];
      primaryAt.set(identity.channel, index);
    }
    declared.push({ ...identity, address: normalised.address, index });
  });
  if (Object.keys(fieldErrors).length) throw AppError.validation({ formErrors: [], fieldErrors });
  return declared;
}

/**
 * The natural-key upsert of the spec: one contact per address per channel. No owner: a new contact (201).
 * One owner: that contact, attributes merged, declared identity fields applied, new identities added (200).
 * Several owners: 409 ambiguous_identities, nothing merged. Races end in the unique index on
 * (workspace, channel, address); the losing attempt rolls back and is retried, and then finds the winner.
 */
export async function upsertContact(db: Sequelize, workspaceId: string, input: UpsertContactInput): Promise<UpsertOutcome> {
  const declared = declaredIdentities(input.identities);
  const fields = fieldsByKey(await listCustomFields(db, workspaceId));
  const attributes = planAttributes(input.attributes ?? {}, fields);
  if (Object.keys(attributes.errors).length) throw AppError.validation({ formErrors: [], fieldErrors: attributes.errors });
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction((transaction) => applyUpsert(db, workspaceId, declared, attributes, transaction));
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isRace(error)) throw error;
    }
  }
}

async function applyUpsert(
  db: Sequelize,
  workspaceId: string,
  declared: DeclaredIdentity[],
  attributes: AttributePlan,
  transaction: Transaction,
): Promise<UpsertOutcome> {
  const warnings = [...attributes.warnings, ...(await suppressionWarnings(db, workspaceId, declared, transaction))];
  const owners = [...new Set((await findIdentityOwners(db, workspaceId, declared, transaction)).map((owner) => owner.contactId))].sort();
  if (owners.length > 1) {
    throw new AppError('ambiguous_identities', 'The identities belong to different contacts; nothing was changed', { contactIds: owners });
  }

  if (owners.length === 0) {
    const contact = await insertContact(db, workspaceId, attributes.set, transaction);
    const plan = planIdentities(declared, []);
    const added = await insertIdentities(db, workspaceId, contact.id, plan.insert, transaction);
    if (added < plan.insert.length) throw new AddressTaken();
    return { id: contact.id, created: true, identitiesAdded: added, warnings: [...warnings, ...plan.warnings] };
  }

  const contactId = owners[0];
  if (!(await lockContact(db, workspaceId, contactId, transaction))) throw new AddressTaken();
  const plan = planIdentities(declared, await identitiesOf(db, workspaceId, [contactId], transaction));
  await demoteIdentities(db, workspaceId, contactId, plan.demote, transaction);
  const added = await insertIdentities(db, workspaceId, contactId, plan.insert, transaction);
  if (added < plan.insert.length) throw new AddressTaken();
  await updateIdentities(db, workspaceId, contactId, plan.update, transaction);
  await mergeContactAttributes(db, workspaceId, contactId, attributes, transaction);
  return { id: contactId, created: false, identitiesAdded: added, warnings: [...warnings, ...plan.warnings] };
}

/**
 * An erased contact's addresses stay suppressed so they are not re-added by accident: such a request is
 * refused until the suppression is deleted. Other suppressions do not block the contact, but an opt-in
 * declared for a suppressed address does not lift the suppression, which the caller should know.
 */
async function suppressionWarnings(
  db: Sequelize,
  workspaceId: string,
  declared: readonly DeclaredIdentity[],
  transaction: Transaction,
): Promise<string[]> {
  const warnings: string[] = [];
  const erased: Record<string, string[]> = {};
  for (const channel of CHANNELS) {
    const onChannel = declared.filter((identity) => identity.channel === channel);
    if (onChannel.length === 0) continue;
    const suppressed = await findSuppressed(db, workspaceId, channel, onChannel.map((identity) => identity.address), transaction);
    for (const identity of onChannel) {
      const reason = suppressed.get(identity.address);
      if (reason === 'erased') {
        erased[`identities[${identity.index}].address`] = [
          `${identity.address} belonged to an erased contact and stays suppressed (erased); DELETE /suppressions/:address to add it again`,
        ];
      }
      else if (reason && identity.consent === 'opted_in') {
        warnings.push(
          `identities[${identity.index}].consent: opted_in is recorded, but ${identity.address} stays suppressed (${reason}) ` +
            'until DELETE /suppressions/:address',
        );
      }
    }
  }
  // 422, not 409: the spec keeps 409 for ambiguous_identities alone, and the address is an input the request
  // may not use (erasure keeps its promise that the person is not re-added by accident), named by its field.
  if (Object.keys(erased).length) throw AppError.validation({ formErrors: [], fieldErrors: erased });
  return warnings;
}
