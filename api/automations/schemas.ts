import { z } from 'zod';
import { EventMatchSchema, GraphSchema, MAX_TRIGGERS } from '../../core/journeys/graph-schema';
import { offset, text } from '../http/formats';

const triggersField = z.array(EventMatchSchema).max(MAX_TRIGGERS).describe(`The events that enroll a contact (at most ${MAX_TRIGGERS}); any one suffices`);

const definitionFields = {
  description: z.string().trim().max(2_000).nullable().optional(),
  trigger: EventMatchSchema.optional().describe('Shorthand for triggers: [trigger]'),
  triggers: triggersField.optional(),
  goal: EventMatchSchema.nullable().optional().describe('An event that ends the enrollment with exitReason goal_reached'),
};

const oneTriggerForm = {
  check: (body: { trigger?: unknown; triggers?: unknown }) => !(body.trigger !== undefined && body.triggers !== undefined),
  message: { message: 'Give trigger or triggers, not both', path: ['trigger'] },
};

export const CreateAutomationBody = z
  .object({ name: text(200), ...definitionFields, graph: GraphSchema })
  .refine(oneTriggerForm.check, oneTriggerForm.message)
  .meta({ id: 'CreateAutomation', not: { required: ['trigger', 'triggers'] } });

export const UpdateAutomationBody = z
  .object({ name: text(200).optional(), ...definitionFields, graph: GraphSchema.optional() })
  .refine(oneTriggerForm.check, oneTriggerForm.message)
  .meta({ id: 'UpdateAutomation', not: { required: ['trigger', 'triggers'] } });

export type CreateAutomationInput = z.infer<typeof CreateAutomationBody>;
export type UpdateAutomationInput = z.infer<typeof UpdateAutomationBody>;

export const MAX_ENROLL_CONTACT_IDS = 1_000;

export const AutomationEnrollBody = z
  .object({
    listId: z.uuid().optional(),
    segmentId: z.uuid().optional(),
    contactIds: z.array(z.uuid()).min(1).max(MAX_ENROLL_CONTACT_IDS).optional(),
  })
  .refine((body) => [body.listId, body.segmentId, body.contactIds].filter((given) => given !== undefined).length === 1, {
    message: 'Give exactly one of listId, segmentId and contactIds',
    path: ['listId'],
  })
  .meta({ id: 'AutomationEnrollRequest', oneOf: [{ required: ['listId'] }, { required: ['segmentId'] }, { required: ['contactIds'] }] });

export type AutomationEnrollInput = z.infer<typeof AutomationEnrollBody>;

export const AutomationParams = z.object({ id: z.uuid() });
export const EnrollmentParams = z.object({ id: z.uuid(), enrollmentId: z.uuid() });

export const AutomationListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const EnrollmentListQuery = z.object({
  status: z.enum(['active', 'completed', 'exited']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

const EventMatchView = z.object({ event: z.string(), match: z.record(z.string(), z.string()) }).meta({ id: 'EventMatch' });
const AUTOMATION_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;

export const AutomationSummarySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(AUTOMATION_STATUSES),
    description: z.string().nullable(),
    trigger: EventMatchView.nullable(),
    triggers: z.array(EventMatchView),
    version: z.int().nullable().describe('The current version; null before the first activation'),
    activeEnrollments: z.int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AutomationSummary' });

export const AutomationListSchema = z
  .object({ automations: z.array(AutomationSummarySchema), total: z.int(), limit: z.int(), offset: z.int() })
  .meta({ id: 'AutomationList' });

export const AutomationDetailSchema = AutomationSummarySchema.extend({
  versionId: z.uuid().nullable().describe('The current version\'s id'),
  draftVersionId: z.uuid().describe('The id the next activation publishes the draft under'),
  goal: EventMatchView.nullable(),
  graph: z.record(z.string(), z.unknown()).describe('The draft graph, as written'),
  publishedGraph: z.record(z.string(), z.unknown()).nullable().describe('The current version\'s graph, normalized (durations in milliseconds)'),
}).meta({ id: 'AutomationDetail' });

export const AutomationCreatedSchema = z
  .object({ id: z.uuid(), versionId: z.uuid(), status: z.literal('draft') })
  .meta({ id: 'AutomationCreated' });

export const AutomationStatusSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(AUTOMATION_STATUSES),
    version: z.int().optional(),
    versionId: z.uuid().optional(),
    warnings: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('activate: what runs but may not reach every contact, by field (a WhatsApp message step without contentSid)'),
  })
  .meta({ id: 'AutomationStatus' });

export const AutomationEnrollQueuedSchema = z
  .object({ id: z.uuid(), queued: z.boolean(), audience: z.enum(['list', 'segment', 'contacts']) })
  .meta({ id: 'AutomationEnrollQueued' });

const SKIP_REASONS = 'suppressed, no_reachable_identity, no_sender, outside_whatsapp_window, quota_exceeded, ...';

const SkippedStepSchema = z
  .object({
    nodeId: z.string(),
    nodeLabel: z.string(),
    reason: z.string().describe(`Why no message went: ${SKIP_REASONS}`),
    at: z.iso.datetime(),
  })
  .meta({ id: 'SkippedJourneyStep' });

export const EnrollmentSchema = z
  .object({
    id: z.uuid(),
    automationId: z.uuid(),
    contactId: z.uuid(),
    version: z.int(),
    versionId: z.uuid(),
    status: z.enum(['active', 'completed', 'exited']),
    currentNodeId: z.string().nullable(),
    currentNodeType: z.string().nullable(),
    currentNodeLabel: z.string().nullable(),
    exitReason: z.string().nullable(),
    enteredAt: z.iso.datetime(),
    exitedAt: z.iso.datetime().nullable(),
    skippedSteps: z.array(SkippedStepSchema).describe('Message steps the journey skipped at run time, oldest first'),
  })
  .meta({ id: 'Enrollment' });

export const EnrollmentListSchema = z
  .object({ data: z.array(EnrollmentSchema), total: z.int(), limit: z.int(), offset: z.int() })
  .meta({ id: 'EnrollmentList' });

export const AutomationStatsSchema = z
  .object({
    automationId: z.uuid(),
    nodes: z.array(
      z.object({
        nodeId: z.string(),
        nodeType: z.string().nullable().describe('null for a node only an earlier version has'),
        label: z.string().nullable(),
        skipped: z.int().describe('Message steps skipped at this node, over every version'),
        skippedByReason: z.record(z.string(), z.int()).describe(`Those skips by reason: ${SKIP_REASONS}`),
      }),
    ),
  })
  .meta({ id: 'AutomationStats' });
