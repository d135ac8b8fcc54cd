import type { Channel, Consent } from '../identities';
import type { ImportRow, RowError } from './rows';

/** What one batch writes, decided in memory from who owns the batch's addresses now. */
export interface BatchPlan {
  newContacts: Array<{ id: string; attributes: Record<string, unknown> }>;
  /** Attributes merged into contacts that existed before the batch. */
  attributeMerges: Array<{ id: string; attributes: Record<string, unknown> }>;
  /** New identities; `primary` is a candidate, kept only when the contact has no primary on the channel. */
  identities: Array<{ channel: Channel; address: string; contactId: string; consent: Consent; primary: boolean }>;
  /** Existing identities of blocklisted rows: consent becomes opted_out, the address is suppressed. */
  unsubscribed: Array<{ channel: Channel; address: string }>;
  tags: Array<{ contactId: string; name: string }>;
  lists: Array<{ contactId: string; name: string }>;
  created: number;
  updated: number;
  errors: RowError[];
}

const keyOf = (identity: { channel: Channel; address: string }) => `${identity.channel} ${identity.address}`;

/**
 * Applies the contact upsert's identity rule to the rows in file order, as if each were a POST /contacts:
 * no owner of any of the row's addresses → a new contact (created); one owner → that contact (updated, even
 * when an earlier row of the same file created it); several owners → the row fails, nothing of it written.
 * An address of an erased contact (suppression `erased`) fails its row too, as the upsert refuses it.
 * `owners` holds the addresses' owners in the database; rows add theirs as they go.
 */
export function planBatch(
  rows: readonly ImportRow[],
  context: { owners: ReadonlyMap<string, string>; erased: ReadonlySet<string>; consent: Consent; newId: () => string },
): BatchPlan {
  const owners = new Map(context.owners);
  const plan: BatchPlan = { newContacts: [], attributeMerges: [], identities: [], unsubscribed: [], tags: [], lists: [], created: 0, updated: 0, errors: [] };
  const fresh = new Map<string, Record<string, unknown>>();
  const merges = new Map<string, Record<string, unknown>>();
  const primaryTaken = new Set<string>();
  const tagPairs = new Set<string>();
  const listPairs = new Set<string>();
  for (const row of rows) {
    const erased = row.identities.find((identity) => context.erased.has(keyOf(identity)));
    if (erased) {
      plan.errors.push({ line: row.line, message: `${erased.address} belongs to an erased contact; delete its suppression to import it` });
      continue;
    }
    const found = [...new Set(row.identities.map((identity) => owners.get(keyOf(identity))).filter((id): id is string => id !== undefined))];
    if (found.length > 1) {
      plan.errors.push({ line: row.line, message: 'The addresses belong to different contacts; the row was not imported' });
      continue;
    }
    let contactId = found[0];
    if (contactId === undefined) {
      contactId = context.newId();
      fresh.set(contactId, {});
      plan.newContacts.push({ id: contactId, attributes: fresh.get(contactId) as Record<string, unknown> });
      plan.created += 1;
    } else {
      plan.updated += 1;
    }
    const target = fresh.get(contactId) ?? merges.get(contactId) ?? {};
    Object.assign(target, row.attributes);
    if (!fresh.has(contactId) && Object.keys(target).length) merges.set(contactId, target);
    for (const identity of row.identities) {
      const key = keyOf(identity);
      if (owners.has(key)) {
        if (row.blocklisted && identity.channel === 'email') plan.unsubscribed.push(identity);
        continue;
      }
      owners.set(key, contactId);
      const channelKey = `${contactId} ${identity.channel}`;
      const consent = row.blocklisted && identity.channel === 'email' ? 'opted_out' : context.consent;
      plan.identities.push({ ...identity, contactId, consent, primary: !primaryTaken.has(channelKey) });
      primaryTaken.add(channelKey);
      if (row.blocklisted && identity.channel === 'email') plan.unsubscribed.push(identity);
    }
    for (const name of row.tags) addPair(plan.tags, tagPairs, contactId, name);
    for (const name of row.lists) addPair(plan.lists, listPairs, contactId, name);
  }
  plan.attributeMerges = [...merges].map(([id, attributes]) => ({ id, attributes }));
  return plan;
}

/** Names are case-insensitive (tags and lists are unique on lower(name)). */
function addPair(into: Array<{ contactId: string; name: string }>, seen: Set<string>, contactId: string, name: string): void {
  const key = `${contactId} ${name.toLowerCase()}`;
  if (seen.has(key)) return;
  seen.add(key);
  into.push({ contactId, name });
}
