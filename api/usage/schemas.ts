import { z } from 'zod';

export const UsageSnapshotSchema = z
  .object({
    plan: z.string(),
    messages: z.object({
      limit: z.number().int().describe('Messages included in the plan each month; one per recipient'),
      used: z.number().int(),
      remaining: z.number().int(),
      periodStart: z.iso.datetime(),
      periodEnd: z.iso.datetime().describe('Exclusive: the start of the next period'),
      overage: z.number().int().describe('Messages past the limit this period (billed on plans with overage)'),
      overageBilling: z.boolean().describe('Whether sends past the limit are billed instead of refused'),
    }),
  })
  .meta({ id: 'UsageSnapshot' });

export type UsageSnapshot = z.infer<typeof UsageSnapshotSchema>;
