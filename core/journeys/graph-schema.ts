import { z } from 'zod';
import { AudienceRulesInput } from '../audience-rules';
import { CHANNELS } from '../identities';
import { parseDuration } from './durations';

import type { JourneyNode } from './graph';

/**
 * The journey graph as clients write it (spec/decisions.md, Automations): `{ entry, nodes }` with node
 * types `message`, `wait`, `wait_for_event`, `branch` and `exit`, and the automation's triggers and goal.
 * A published version stores it normalized (./graph.ts). Checks that need the graph as a whole (acyclic,
 * every `next` exists, every node reachable) are in ./validation.ts.
 */

export const MAX_NODES = 200;
export const MAX_TRIGGERS = 10;

const NodeId = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'A node id is 1 to 64 letters, digits, _ . : or -');
const NextId = NodeId.nullable();
const Label = z.string().min(1).max(200).optional();
const ChannelSchema = z.enum(CHANNELS);

/** `{ event, match }`: the event's name, and properties that must equal these strings exactly. */
export const EventMatchSchema = z.strictObject({
  event: z.string().min(1).max(200),
  match: z.record(z.string().min(1).max(100), z.string().max(1_000)).default({}),
});

/** An ISO 8601 duration (`P3D`, `PT12H`) or a number of seconds. */
const DurationInput = z.union([z.int().min(1), z.string().min(2).max(40)]);

const LocalTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'A local time is HH:MM');

export const MessageNodeSchema = z.strictObject({
  id: NodeId,
  type: z.literal('message'),
  label: Label,
  preferredChannel: ChannelSchema,
  /** Channels tried in order when the preferred one has no reachable identity or its send fails. */
  fallbackChain: z.array(ChannelSchema).max(2).default([]),
  /** The template of each channel the message may go out on (the preferred one and the chain's). */
  templateByChannel: z.partialRecord(ChannelSchema, z.uuid()),
  attachmentIds: z.array(z.uuid()).max(20).default([]),
  /** The email sender; the workspace's verified domain's default sender when absent. */
  from: z.string().min(3).max(320).optional(),
  /**
   * WhatsApp: an approved Twilio content template (as POST /messages' contentSid), sent instead of the
   * whatsapp template's free-form text when the contact has not written within 24 hours. Without it such a
   * contact is not reached on WhatsApp (the next channel of the chain, else the step is skipped).
   */
  contentSid: z
    .string()
    .regex(/^HX[0-9a-fA-F]{32}$/)
    .optional()
    .describe('whatsapp: an approved Twilio content template, used outside the contact\'s 24-hour window (the whatsapp template\'s text is used within it)'),
  contentVariables: z
    .record(z.string().regex(/^[A-Za-z0-9_]{1,64}$/), z.string().max(1024))
    .optional()
    .describe('whatsapp: the content template\'s variables ({"1": "{{ contact.firstName }}"}), Liquid over the contact as in templates'),
  next: NextId,
});

export const WaitNodeSchema = z.strictObject({
  id: NodeId,
  type: z.literal('wait'),
  label: Label,
  duration: DurationInput.optional(),
  /** An absolute moment (ISO 8601 date-time): the wait ends then, or at once if it has passed. */
  until: z.iso.datetime({ offset: true }).optional(),
  /** After the duration (if any), on to the next HH:MM in the contact's time zone. */
  atLocalTime: LocalTime.optional(),
  next: NextId,
});

export const WaitForEventNodeSchema = z.strictObject({
  id: NodeId,
  type: z.literal('wait_for_event'),
  label: Label,
  event: z.string().min(1).max(200),
  match: z.record(z.string().min(1).max(100), z.string().max(1_000)).default({}),
  timeout: DurationInput,
  onEvent: NextId,
  onTimeout: NextId,
});

export const BranchNodeSchema = z.strictObject({
  id: NodeId,
  type: z.literal('branch'),
  label: Label,
  /** AudienceRules, evaluated against the contact at the moment the branch is reached. */
  condition: AudienceRulesInput,
  then: NextId,
  else: NextId,
});

export const ExitNodeSchema = z.strictObject({ id: NodeId, type: z.literal('exit'), label: Label });

export const NodeSchema = z.discriminatedUnion('type', [MessageNodeSchema, WaitNodeSchema, WaitForEventNodeSchema, BranchNodeSchema, ExitNodeSchema]);

export const GraphSchema = z.strictObject({
  entry: NodeId,
  nodes: z.array(NodeSchema).min(1).max(MAX_NODES),
});

export type GraphInput = z.infer<typeof GraphSchema>;
export type NodeInput = z.infer<typeof NodeSchema>;

/** The normalized node of a checked input node: durations become milliseconds. */
export function normalizeNode(node: NodeInput): JourneyNode {
  switch (node.type) {
    case 'wait': {
      const { duration, ...rest } = node;
      return { ...rest, ...(duration !== undefined && { durationMs: parseDuration(duration) ?? 0 }) };
    }
    case 'wait_for_event': {
      const { timeout, ...rest } = node;
      return { ...rest, timeoutMs: parseDuration(timeout) ?? 0 };
    }
    default:
      return node;
  }
}
