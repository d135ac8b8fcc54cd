import type { Sequelize } from 'sequelize';
import { DOWNLOAD_URL_SECONDS, downloadDisposition } from '../../core/attachments';
import { AppError } from '../../core/errors';
import type { BlobStore } from '../../db/blob-store';
import { findInboxMessage } from '../../db/repositories/inbox-messages';
import type { InboxService } from './service';

/**
 * Downloads of the files of received mail. The inbound-mail workflow stores each at a blob key listed in the
 * message's `attachments`; the key is ours and never shown, so the answer is a short-lived signed URL, as
 * GET /attachments/:id gives for uploaded files (which our own messages' attachments are: see their id).
 */
export function createInboxAttachmentDownloads(deps: { db: Sequelize; blobs: BlobStore; inboxes: InboxService }) {
  return {
    async download(workspaceId: string, inboxId: string, messageId: string, index: number) {
      await deps.inboxes.get(workspaceId, inboxId);
      const message = await findInboxMessage(deps.db, workspaceId, inboxId, messageId);
      const attachment = message?.attachments[index];
      if (!attachment?.blobKey) throw AppError.notFound('Attachment');
      const filename = attachment.filename ?? `attachment-${index + 1}`;
      const contentType = attachment.contentType ?? 'application/octet-stream';
      const downloadUrl = await deps.blobs.presignGet(attachment.blobKey, { contentType, disposition: downloadDisposition(filename) }, DOWNLOAD_URL_SECONDS);
      return {
        attachment: { index, filename, contentType, size: attachment.size ?? null },
        downloadUrl,
        expiresAt: new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000).toISOString(),
      };
    },
  };
}

export type InboxAttachmentDownloads = ReturnType<typeof createInboxAttachmentDownloads>;
