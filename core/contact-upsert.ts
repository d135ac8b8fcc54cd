import { type FieldDefinition, fieldValue } from './custom-fields';
import type { Channel, Consent } from './identities';

/** An identity of a POST /contacts body after its address was normalised; absent fields were not declared. */
export interface DeclaredIdentity {
  channel: Channel;
  address: string;
  consent?: Consent;
  verified?: boolean;
  isPrimary?: boolean;
  /** Position in the request, for messages that name the field. */
  index: number;
}

export interface StoredIdentity {
  channel: Channel;
  address: string;
  consent: Consent;
  verified: boolean;
  isPrimary: boolean;
}

export interface IdentityChange {
  channel: Channel;
  address: string;
  consent?: Consent;
  verified?: boolean;
  isPrimary?: boolean;
}

export interface IdentityPlan {
  /** Primaries to clear first: the partial unique index allows one primary per channel at every moment. */
  demote: Array<{ channel: Channel; address: string }>;
  insert: StoredIdentity[];
  update: IdentityChange[];
  warnings: string[];
}

/**
 * What an upsert does to a contact's identities. Declared fields change, omitted ones never do (so an
 * omitted consent never clears an opt-in). A channel keeps exactly one primary: the identity declared
 * `isPrimary: true`, else the current primary, else the first identity of the channel in the request.
 * A primary moves only when another identity is declared primary; `isPrimary: false` on the current
 * primary cannot leave the channel without one, so it is ignored with a warning.
 */
export function planIdentities(declared: readonly DeclaredIdentity[], stored: readonly StoredIdentity[]): IdentityPlan {
  const plan: IdentityPlan = { demote: [], insert: [], update: [], warnings: [] };
  const storedByKey = new Map(stored.map((identity) => [`${identity.channel} ${identity.address}`, identity]));
  const primaryOf = new Map<Channel, string>();
  for (const channel of new Set(declared.map((identity) => identity.channel))) {
    const onChannel = declared.filter((identity) => identity.channel === channel);
    const current = stored.find((identity) => identity.channel === channel && identity.isPrimary);
    const chosen = onChannel.find((identity) => identity.isPrimary === true)?.address ?? current?.address ?? onChannel[0].address;
    primaryOf.set(channel, chosen);
    if (current && current.address !== chosen) plan.demote.push({ channel, address: current.address });
  }

  for (const identity of declared) {
    const isPrimary = primaryOf.get(identity.channel) === identity.address;
    if (identity.isPrimary === false && isPrimary) {
      plan.warnings.push(
        `identities[${identity.index}].isPrimary: false was ignored; a channel keeps its primary until another identity is declared primary`,
      );
    }
    const existing = storedByKey.get(`${identity.channel} ${identity.address}`);
    if (!existing) {
      plan.insert.push({
        channel: identity.channel,
        address: identity.address,
        consent: identity.consent ?? 'unknown',
        verified: identity.verified ?? false,
        isPrimary,
      });
      continue;
    }
    const change: IdentityChange = { channel: identity.channel, address: identity.address };
    if (identity.consent !== undefined && identity.consent !== existing.consent) change.consent = identity.consent;
    if (identity.verified !== undefined && identity.verified !== existing.verified) change.verified = identity.verified;
    if (isPrimary !== existing.isPrimary) change.isPrimary = isPrimary;
    if (Object.keys(change).length > 2) plan.update.push(change);
  }
  return plan;
}

export interface AttributePlan {
  set: Record<string, unknown>;
  unset: string[];
  errors: Record<string, string[]>;
  warnings: string[];
}

/**
 * Splits declared attributes into keys to set and keys to delete (a null deletes), checking values
 * against the workspace's custom fields. Values for archived fields are ignored with a warning: the
 * field is retired, and writing to it silently would bring it back to life in segments. A null still
 * deletes the key, since removing data never revives anything.
 */
export function planAttributes(input: Record<string, unknown>, fields: ReadonlyMap<string, FieldDefinition>): AttributePlan {
  const plan: AttributePlan = { set: {}, unset: [], errors: {}, warnings: [] };
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (value === null) {
      plan.unset.push(key);
      continue;
    }
    const field = fields.get(key);
    if (field?.archived) {
      plan.warnings.push(`attributes.${key}: the custom field is archived; the value was ignored`);
      continue;
    }
    if (!field) {
      plan.set[key] = value;
      continue;
    }
    const checked = fieldValue(field, value);
    if (checked.ok) plan.set[key] = checked.value;
    else plan.errors[`attributes.${key}`] = [`${checked.reason} (custom field of type ${field.type})`];
  }
  return plan;
}
