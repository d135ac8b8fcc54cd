import type { z } from 'zod';
import type { SuppressionRecord } from '../../db/repositories/suppressions';
import type { SuppressionSchema } from './schemas';

export function suppressionView(suppression: SuppressionRecord): z.infer<typeof SuppressionSchema> {
  return {
    channel: suppression.channel,
    address: suppression.address,
    reason: suppression.reason,
    detail: suppression.detail,
    messageId: suppression.messageId,
    createdAt: suppression.createdAt.toISOString(),
  };
}
