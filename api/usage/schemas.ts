import { z } from 'zod';

const ByChannelSchema = z
  .object({ email: z.number().int(), whatsapp: z.number().int(), telegram: z.number().int() })
  .describe('Messages counted this period per channel (one per recipient)');

const ByKindSchema = z
  .object({
    transactional: z.number().int().describe('POST /emails, /emails/batch and /messages, and channel fallbacks of them'),
    campaign: z.number().int(),
    automation: z.number().int().describe('Journey messages'),
    inbox: z.number().int().describe('Mail sent from agent inboxes (send, reply, draft send)'),
  })
  .describe('Messages counted this period per kind of send');

export const UsageQuery = z.object({
  period: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'A month as YYYY-MM')
    .optional()
    .describe('A month (UTC) up to the current one; the current month when absent'),
});

export const UsageSnapshotSchema = z
  .object({
    plan: z.string().describe('The plan of the period: the closed statement\'s for a closed month, else the current plan'),
    period: z.string().describe('YYYY-MM'),
    closed: z.boolean().describe('Whether the month is closed and its statement written (figures are the statement\'s)'),
    messages: z.object({
      limit: z.number().int().describe('Messages included in the plan each month; one per recipient'),
      used: z.number().int(),
      remaining: z.number().int(),
      periodStart: z.iso.datetime(),
      periodEnd: z.iso.datetime().describe('Exclusive: the start of the next period'),
      overage: z.number().int().describe('Messages past the limit this period (billed on plans with overage)'),
      overageBilling: z.boolean().describe('Whether sends past the limit are billed instead of refused'),
      byChannel: ByChannelSchema,
      byKind: ByKindSchema,
    }),
    daily: z
      .array(z.object({ date: z.iso.date(), messages: z.number().int(), byChannel: ByChannelSchema }))
      .describe('Every day of the period so far (UTC), oldest first, days without sends as zeros'),
    inboundStorage: z
      .object({
        limit: z.number().int().describe('Bytes of received mail the workspace may hold (INBOUND_STORAGE_QUOTA_BYTES)'),
        used: z.number().int().describe('Raw size of every received message held, each inbox\'s copy counted'),
        remaining: z.number().int(),
        messages: z.number().int().describe('Received messages held'),
      })
      .describe('Received mail now (not per period): past the limit the inbound listener answers 452 4.2.2 until mail is deleted'),
  })
  .meta({ id: 'UsageSnapshot' });

export type UsageSnapshot = z.infer<typeof UsageSnapshotSchema>;
