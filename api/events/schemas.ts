import { z } from 'zod';
import { EMAIL_ADDRESS } from '../http/formats';

/** Most properties one event carries: triggers and goals match a few of them; the rest is kept for segments. */
export const MAX_EVENT_PROPERTIES = 100;

export const EventBody = z
  .object({
    event: z.string().min(1).max(200).describe('The event\'s name, matched exactly by automation triggers, goals and wait_for_event nodes'),
    contactId: z.uuid().optional().describe('The contact the event is about (or email)'),
    email: z.string().max(320).meta({ pattern: EMAIL_ADDRESS }).optional().describe('Its email address; an unknown one creates the contact (consent unknown)'),
    properties: z
      .record(z.string().min(1).max(100), z.unknown())
      .refine((value) => Object.keys(value).length <= MAX_EVENT_PROPERTIES, `At most ${MAX_EVENT_PROPERTIES} properties`)
      .default({})
      .describe('Matched as exact strings by triggers\' `match` (numbers and booleans as their text). A number `value` (major unit, optional three-letter `currency`) also records a conversion (docs/conversions.md)'),
    occurredAt: z.iso.datetime({ offset: true }).optional().describe('When it happened; now when absent'),
    idempotencyKey: z.string().min(8).max(255).optional().describe('A repeat with the same key stores nothing and answers the first event\'s id with status duplicate'),
  })
  .refine((body) => body.contactId !== undefined || body.email !== undefined, { message: 'Give contactId or email', path: ['contactId'] })
  .meta({ id: 'EventRequest', anyOf: [{ required: ['contactId'] }, { required: ['email'] }] });

export type EventInput = z.infer<typeof EventBody>;

export const EventAcceptedSchema = z
  .object({
    id: z.uuid(),
    triggered: z.int().describe('Enrollments the event started'),
    goalsCompleted: z.int().describe('Running enrollments whose goal it matched'),
    status: z.literal('duplicate').optional().describe('Only on a repeat of an idempotencyKey'),
  })
  .meta({ id: 'EventAccepted' });
