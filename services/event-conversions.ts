import type { Sequelize } from 'sequelize';
import { eventValueOf } from '../core/attribution/event-value';
import { AppError } from '../core/errors';
import { acceptContactEvent, type StoredEvent } from '../db/repositories/contact-events';
import { attributionWindowDays, recordConversion } from '../db/repositories/conversions';

type EventToAccept = Parameters<typeof acceptContactEvent>[2];

/**
 * POST /events' point of acceptance with the conversion convention (core/attribution/event-value.ts): an
 * event carrying `properties.value` is stored together with its conversion, in one transaction, so a crash
 * never leaves one without the other. The conversion's external id is the stored event's id, and a repeat of
 * the idempotency key stores nothing (it answers the first event), so a retried event records it once. The
 * value is checked before anything is stored: a refused request does not consume its key.
 */
export async function acceptEventWithConversion(
  db: Sequelize,
  workspaceId: string,
  event: EventToAccept,
): Promise<{ event: StoredEvent; duplicate: boolean }> {
  const outcome = eventValueOf(event.properties);
  if (outcome.kind === 'invalid') throw AppError.validation({ formErrors: [], fieldErrors: { [outcome.field]: [outcome.message] } });
  if (outcome.kind === 'none') return acceptContactEvent(db, workspaceId, event);
  return db.transaction(async (transaction) => {
    const accepted = await acceptContactEvent(db, workspaceId, event, transaction);
    if (accepted.duplicate) return accepted;
    await recordConversion(
      db,
      workspaceId,
      {
        contactId: accepted.event.contactId,
        name: accepted.event.name,
        source: 'event',
        externalId: accepted.event.id,
        valueCents: outcome.value.valueCents,
        currency: outcome.value.currency,
        occurredAt: accepted.event.occurredAt,
        lookbackDays: await attributionWindowDays(db, workspaceId, transaction),
      },
      transaction,
    );
    return accepted;
  });
}
