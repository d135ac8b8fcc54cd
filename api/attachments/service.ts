import type { Sequelize } from 'sequelize';
import { ATTACHMENT_LIMITS, base64DecodedLength, decodeBase64Content, inferContentType } from '../../core/attachments';
import { AppError } from '../../core/errors';
import type { BlobStore } from '../../db/blob-store';
import { type AttachmentRecord, findAttachment, listAttachments } from '../../db/repositories/attachments';
import { createAttachmentFiles, type SignedUpload } from '../../db/attachment-files';
import type { CreateAttachmentInput } from './schemas';

function contentProblem(message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { content: [message] } });
}

export function createAttachmentService({ db, blobs }: { db: Sequelize; blobs: BlobStore }) {
  const files = createAttachmentFiles({ db, blobs });

  /** A deleted attachment is answered like one that never existed. */
  async function requireLive(workspaceId: string, attachmentId: string): Promise<AttachmentRecord> {
    const attachment = await findAttachment(db, workspaceId, attachmentId);
    if (!attachment || attachment.status === 'deleted') throw AppError.notFound('Attachment');
    return attachment;
  }

  return {
    list: (workspaceId: string, page: { limit: number; offset: number }) => listAttachments(db, workspaceId, page),

    /** Direct upload (content: ready at once) or signed upload (size: pending, with an uploadUrl). */
    async create(workspaceId: string, input: CreateAttachmentInput): Promise<{ attachment: AttachmentRecord } | SignedUpload> {
      const contentType = input.contentType ?? inferContentType(input.filename);
      if (input.size !== undefined) {
        return files.startSignedUpload(workspaceId, { filename: input.filename, contentType, size: input.size });
      }
      // The schema lets through exactly one of size and content.
      const content = input.content ?? '';
      if (base64DecodedLength(content) > ATTACHMENT_LIMITS.fileBytes) {
        throw contentProblem(`must be at most ${ATTACHMENT_LIMITS.fileBytes} bytes once decoded`);
      }
      const decoded = decodeBase64Content(content);
      if (!decoded.ok) throw contentProblem(decoded.problem);
      if (decoded.bytes.length === 0) throw contentProblem('the file is empty');
      const attachment = await files.store(workspaceId, { filename: input.filename, contentType, bytes: decoded.bytes, origin: 'upload' });
      return { attachment };
    },

    async download(workspaceId: string, attachmentId: string): Promise<{ attachment: AttachmentRecord; downloadUrl: string }> {
      const attachment = await requireLive(workspaceId, attachmentId);
      return { attachment, downloadUrl: await files.downloadUrl(attachment) };
    },

    /** Optional (the first use in a send confirms too); confirming a ready attachment changes nothing. */
    async confirm(workspaceId: string, attachmentId: string): Promise<AttachmentRecord> {
      const attachment = await files.reconcile(workspaceId, await requireLive(workspaceId, attachmentId));
      if (attachment.status === 'deleted') throw AppError.notFound('Attachment');
      return attachment;
    },

    async remove(workspaceId: string, attachmentId: string): Promise<void> {
      const outcome = await files.remove(workspaceId, attachmentId);
      if (outcome === 'not_found') throw AppError.notFound('Attachment');
      if (outcome !== 'deleted') {
        throw new AppError('conflict', `The automation "${outcome.inUseBy.name}" (${outcome.inUseBy.id}) attaches this file: change or archive it first`);
      }
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
