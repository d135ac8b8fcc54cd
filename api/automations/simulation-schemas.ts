import { z } from 'zod';
import { CHANNELS } from '../../core/identities';

/** POST /automations/:id/simulate: the journey run for one contact under a fake clock, nothing sent. */

export const MAX_SIMULATED_EVENTS = 100;

const Properties = z.record(z.string().min(1).max(100), z.unknown());
const Moment = z.iso.datetime({ offset: true });

export const SimulatedContactBody = z
  .strictObject({
    attributes: Properties.optional().describe('Its attributes: variables of the templates, attribute conditions of branches, its time zone'),
    email: z.string().min(3).max(320).optional(),
    phone: z.string().min(3).max(40).optional().describe('Reaches it on WhatsApp'),
    telegramChatId: z.string().min(1).max(40).optional(),
  })
  .meta({ id: 'SimulatedContact', description: 'A contact that does not exist: its addresses are taken as verified, opted in and primary.' });

export const SimulatedEventBody = z.strictObject({
  event: z.string().min(1).max(200),
  properties: Properties.default({}),
  at: Moment.describe('When the contact performs it, on the simulated clock'),
});

export const SimulateBody = z
  .strictObject({
    contactId: z.uuid().optional().describe('A contact of the workspace; or `contact`, or neither for an empty synthetic one'),
    contact: SimulatedContactBody.optional(),
    version: z.enum(['current', 'draft']).optional().describe('Default: current when a version is published, else the draft'),
    startAt: Moment.optional().describe('When the contact enters; default now'),
    events: z.array(SimulatedEventBody).max(MAX_SIMULATED_EVENTS).default([]).describe('What the contact does meanwhile: goals, wait_for_event'),
  })
  .superRefine((body, ctx) => {
    if (body.contactId !== undefined && body.contact !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['contact'], message: 'Give contactId or contact, not both' });
    }
  })
  .meta({ id: 'AutomationSimulateRequest', not: { required: ['contactId', 'contact'] } });

const NodeType = z.enum(['message', 'wait', 'wait_for_event', 'branch', 'exit']);

export const SimulationResultSchema = z
  .object({
    path: z.array(
      z.object({
        nodeId: z.string(),
        nodeType: NodeType,
        label: z.string(),
        at: z.iso.datetime().describe('When the run entered the node'),
        outcome: z
          .enum(['sent', 'unreachable', 'waited', 'event', 'timeout', 'then', 'else', 'exit', 'goal_reached'])
          .describe('message: sent, or unreachable (no channel reaches the contact; skipped); wait_for_event: event or timeout; branch: then or else; goal_reached: the goal ended the run here'),
      }),
    ),
    messages: z.array(
      z.object({
        nodeId: z.string(),
        channel: z.enum(CHANNELS),
        to: z.string(),
        subject: z.string().nullable(),
        html: z.string().optional(),
        text: z.string().optional(),
        at: z.iso.datetime().describe('When it would go out'),
        deferred: z
          .object({ from: z.iso.datetime(), reason: z.enum(['quiet_hours', 'frequency_cap']) })
          .optional()
          .describe('Held back from `from` by quiet hours or a frequency cap'),
      }),
    ),
    outcome: z.object({
      status: z.enum(['completed', 'exited']),
      exitReason: z.enum(['completed', 'exit_node', 'goal_reached']),
      at: z.iso.datetime(),
    }),
    version: z.int().nullable().describe('The version run; null for the draft'),
    versionId: z.uuid(),
    notes: z.array(z.string()).describe('What the simulation could not reproduce, e.g. branch conditions taken as false'),
  })
  .meta({ id: 'AutomationSimulation' });

export type SimulateInput = z.infer<typeof SimulateBody>;
export type SimulationResult = z.infer<typeof SimulationResultSchema>;
