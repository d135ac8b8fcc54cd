import { z } from 'zod';
import { addressByChannel, offset } from '../http/formats';
import { CHANNELS } from '../../core/identities';
import { DECLARABLE_REASONS, SUPPRESSION_REASONS } from '../../core/suppressions';

export const SuppressionSchema = z
  .object({
    channel: z.enum(CHANNELS),
    address: z.string().describe('Normalised'),
    reason: z.enum(SUPPRESSION_REASONS).describe('erased: the address of a contact erased with DELETE /contacts/:id'),
    detail: z.string().nullable().describe('What the provider said when a delivery refusal added it ("Telegram 403: Forbidden: bot was blocked by the user"); null otherwise'),
    messageId: z.uuid().nullable().describe('The message whose refusal added it; null otherwise'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Suppression' });

export const SuppressionUpsertedSchema = SuppressionSchema.extend({
  created: z.boolean().describe('false when the address was already suppressed (its first reason is kept)'),
}).meta({ id: 'SuppressionUpserted' });

export const SuppressionListSchema = z
  .object({ data: z.array(SuppressionSchema), total: z.int(), limit: z.int(), offset: z.int() })
  .meta({ id: 'SuppressionList' });

export const SuppressionListQuery = z.object({
  channel: z.enum(CHANNELS).optional(),
  reason: z.enum(SUPPRESSION_REASONS).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const CreateSuppressionBody = z
  .object({
    address: z.string().min(1).max(320).describe('Its form follows the channel; a whatsapp number must also exist in its country\'s numbering plan'),
    channel: z.enum(CHANNELS).default('email'),
    reason: z.enum(DECLARABLE_REASONS).default('manual'),
  })
  // The address's form depends on the channel (email when absent); a whatsapp number must also exist in its country's numbering plan.
  .meta({ id: 'CreateSuppression', ...addressByChannel({ channelRequired: false, defaultChannel: 'email' }) });

export const SuppressionParams = z.object({
  address: z.string().min(1).max(320).describe('URL-encoded (%40 for @, %2B for +); removed on every channel it is valid on'),
});

export const SuppressionDeletedSchema = z
  .object({ deleted: z.literal(true), address: z.string(), channels: z.array(z.enum(CHANNELS)) })
  .meta({ id: 'SuppressionDeleted' });
