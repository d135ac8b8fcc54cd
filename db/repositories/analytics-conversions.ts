import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AnalyticsConversion } from '../../core/analytics/connector';
import { attributionWindowDays, recordConversion } from './conversions';

/**
 * Our contacts behind the page's references, in two statements: email identities by address, and contact
 * ids that are really this workspace's (an id from another workspace, or a deleted contact, names nobody).
 */
async function contactsOf(db: Sequelize, workspaceId: string, conversions: readonly AnalyticsConversion[], transaction: Transaction) {
  const emails = [...new Set(conversions.flatMap((c) => (c.contactRef && 'email' in c.contactRef ? [c.contactRef.email] : [])))];
  const ids = [...new Set(conversions.flatMap((c) => (c.contactRef && 'contactId' in c.contactRef ? [c.contactRef.contactId] : [])))];
  const byEmail = new Map<string, string>();
  const known = new Set<string>();
  if (emails.length) {
    const rows = await db.query<{ address: string; contact_id: string }>(
      "SELECT address, contact_id FROM contact_identities WHERE workspace_id = $1 AND channel = 'email' AND address = ANY($2::text[])",
      { bind: [workspaceId, emails], type: QueryTypes.SELECT, transaction },
    );
    for (const row of rows) byEmail.set(row.address, row.contact_id);
  }
  if (ids.length) {
    const rows = await db.query<{ id: string }>('SELECT id FROM contacts WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
      bind: [workspaceId, ids],
      type: QueryTypes.SELECT,
      transaction,
    });
    for (const row of rows) known.add(row.id);
  }
  return (conversion: AnalyticsConversion): string | null => {
    const ref = conversion.contactRef;
    if (!ref) return null;
    if ('email' in ref) return byEmail.get(ref.email) ?? null;
    return known.has(ref.contactId) ? ref.contactId : null;
  };
}

/**
 * Records a page of analytics conversions in the caller's transaction, each through recordConversion (the
 * touch summary, attributed kind `analytics` when no touch of ours, the visit's own UTM then), and answers
 * how many were new: one already recorded by an earlier sync is updated in place and not counted. An
 * external id twice in one page (a CSV with a repeated row) is recorded once, the last one kept.
 */
export async function recordAnalyticsConversions(
  db: Sequelize,
  workspaceId: string,
  conversions: readonly AnalyticsConversion[],
  transaction: Transaction,
): Promise<number> {
  if (conversions.length === 0) return 0;
  const unique = [...new Map(conversions.map((conversion) => [conversion.externalId, conversion])).values()];
  const contactOf = await contactsOf(db, workspaceId, unique, transaction);
  const lookbackDays = await attributionWindowDays(db, workspaceId, transaction);
  let imported = 0;
  for (const conversion of unique) {
    const { created } = await recordConversion(
      db,
      workspaceId,
      {
        contactId: contactOf(conversion),
        name: conversion.name,
        source: 'analytics',
        externalId: conversion.externalId,
        valueCents: conversion.valueCents,
        currency: conversion.currency,
        occurredAt: conversion.occurredAt,
        lookbackDays,
        utm: conversion.utm,
      },
      transaction,
    );
    if (created) imported += 1;
  }
  return imported;
}
