import { AppError } from '../../core/errors';
import { findContact } from '../../db/repositories/contacts';
import { acceptEventWithConversion } from '../../services/event-conversions';
import { type JourneyEventDeps, matchStoredEvent } from '../../services/journey-events';
import { upsertContact } from '../../services/contact-upsert';
import type { EventInput } from './schemas';

export type EventAnswer = { status: 202; body: { id: string; triggered: number; goalsCompleted: number } } | { status: 200; body: { id: string; triggered: 0; goalsCompleted: 0; status: 'duplicate' } };

/**
 * POST /events: the event is stored first (the point of acceptance), then matched against triggers and
 * running journeys (services/journey-events.ts). A repeat of an idempotency key answers the first event
 * and does nothing else: the first request, or the sweeper, matches it.
 */
export function createEventService(deps: JourneyEventDeps) {
  const { db } = deps;

  async function contactOf(workspaceId: string, input: EventInput): Promise<string> {
    if (input.contactId) {
      if (!(await findContact(db, workspaceId, input.contactId))) throw AppError.notFound('Contact');
      return input.contactId;
    }
    // The contact upsert of POST /contacts: the address's owner, or a new contact with consent unknown.
    try {
      return (await upsertContact(db, workspaceId, { identities: [{ channel: 'email', address: input.email as string }] })).id;
    } catch (error) {
      // Its messages name `identities[0].address`; here the field is `email`.
      if (error instanceof AppError && error.code === 'validation_error') {
        const issues = error.details.issues as { fieldErrors: Record<string, string[]> };
        throw AppError.validation({ formErrors: [], fieldErrors: { email: Object.values(issues.fieldErrors).flat() } });
      }
      throw error;
    }
  }

  return {
    async ingest(workspaceId: string, input: EventInput, now: Date): Promise<EventAnswer> {
      const contactId = await contactOf(workspaceId, input);
      const { event, duplicate } = await acceptEventWithConversion(db, workspaceId, {
        contactId,
        name: input.event,
        properties: input.properties,
        occurredAt: input.occurredAt ? new Date(input.occurredAt) : now,
        idempotencyKey: input.idempotencyKey ?? null,
      });
      if (duplicate) return { status: 200, body: { id: event.id, triggered: 0, goalsCompleted: 0, status: 'duplicate' } };
      const outcome = await matchStoredEvent(deps, event);
      return { status: 202, body: { id: event.id, triggered: outcome.triggered, goalsCompleted: outcome.goalsCompleted } };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
