import type { z } from 'zod';
import type { AttachmentRecord } from '../../db/repositories/attachments';
import type { AttachmentSchema } from './schemas';

export function attachmentView(attachment: AttachmentRecord): z.infer<typeof AttachmentSchema> {
  return {
    id: attachment.id,
    filename: attachment.filename,
    contentType: attachment.contentType,
    size: attachment.size,
    // Deleted attachments are never shown (they answer 404), so only the spec's two states reach a client.
    status: attachment.status === 'ready' ? 'ready' : 'pending',
    createdAt: attachment.createdAt.toISOString(),
  };
}
