import type { Sequelize } from 'sequelize';
import { ATTACHMENT_LIMITS, base64DecodedLength, decodeBase64Content, inferContentType } from '../../core/attachments';
import { AppError } from '../../core/errors';
import type { BlobStore } from '../../db/blob-store';
import { type AttachmentRecord, findAttachment, findAttachments, listAttachments } from '../../db/repositories/attachments';
import { liveNodesAttaching } from '../../db/repositories/automations';
import { createAttachmentFiles, type SignedUpload } from '../../db/attachment-files';
import type { CreateAttachmentInput, ReplaceAttachmentInput } from './schemas';

function contentProblem(message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { content: [message] } });
}

/** The bytes of a direct upload's base64, within the 10 MB a file may have. */
function decodedContent(content: string): Buffer {
  if (base64DecodedLength(content) > ATTACHMENT_LIMITS.fileBytes) {
    throw contentProblem(`must be at most ${ATTACHMENT_LIMITS.fileBytes} bytes once decoded`);
  }
  const decoded = decodeBase64Content(content);
  if (!decoded.ok) throw contentProblem(decoded.problem);
  if (decoded.bytes.length === 0) throw contentProblem('the file is empty');
  return decoded.bytes;
}

/**
 * A new size must keep every live journey message that attaches the file within 25 MB, as activation
 * checked them (api/automations/sendability.ts); drafts are checked again when they are activated.
 */
async function checkLiveJourneys(db: Sequelize, workspaceId: string, attachmentId: string, size: number, field: 'content' | 'size'): Promise<void> {
  const nodes = await liveNodesAttaching(db, workspaceId, attachmentId);
  if (nodes.length === 0) return;
  const others = await findAttachments(db, workspaceId, [...new Set(nodes.flatMap((node) => node.attachmentIds))].filter((id) => id !== attachmentId));
  const sizes = new Map(others.filter((other) => other.status === 'ready').map((other) => [other.id, other.size]));
  for (const node of nodes) {
    const total = size + node.attachmentIds.reduce((sum, id) => sum + (id === attachmentId ? 0 : (sizes.get(id) ?? 0)), 0);
    if (total > ATTACHMENT_LIMITS.messageBytes) {
      throw AppError.validation({ formErrors: [], fieldErrors: { [field]: [
        `the automation "${node.name}" (${node.automationId}) attaches this file in node "${node.nodeId}", whose files would total ${total} bytes; a message carries at most ${ATTACHMENT_LIMITS.messageBytes} (25 MB)`,
      ] } });
    }
  }
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
      const bytes = decodedContent(input.content ?? '');
      const attachment = await files.store(workspaceId, { filename: input.filename, contentType, bytes, origin: 'upload' });
      return { attachment };
    },

    /**
     * A new file under the same id: direct (content: in use at once; a pending upload becomes ready with it)
     * or signed (size: an uploadUrl; the current file stays in use until the upload is confirmed).
     */
    async replace(workspaceId: string, attachmentId: string, input: ReplaceAttachmentInput): Promise<{ attachment: AttachmentRecord } | SignedUpload> {
      const current = await requireLive(workspaceId, attachmentId);
      // A file stored from a send's content or url is that message's record of what it carried: it is not
      // the user's to swap (retries of the send would go out with something else).
      if (current.origin !== 'upload') throw new AppError('conflict', 'This file was stored from a send\'s content or url: only uploaded attachments (POST /attachments) can be replaced');
      const filename = input.filename ?? current.filename;
      const contentType = input.contentType ?? (input.filename ? inferContentType(input.filename) : current.contentType);
      if (input.size !== undefined) {
        await checkLiveJourneys(db, workspaceId, attachmentId, input.size, 'size');
        const started = await files.startSignedReplacement(workspaceId, attachmentId, { filename, contentType, size: input.size });
        if (!started) throw AppError.notFound('Attachment');
        return started;
      }
      // The schema lets through exactly one of size and content.
      const bytes = decodedContent(input.content ?? '');
      await checkLiveJourneys(db, workspaceId, attachmentId, bytes.length, 'content');
      const replaced = await files.replace(workspaceId, attachmentId, { filename, contentType, bytes });
      if (!replaced) throw AppError.notFound('Attachment');
      return { attachment: replaced };
    },

    async download(workspaceId: string, attachmentId: string): Promise<{ attachment: AttachmentRecord; downloadUrl: string }> {
      const attachment = await requireLive(workspaceId, attachmentId);
      return { attachment, downloadUrl: await files.downloadUrl(attachment) };
    },

    /**
     * Optional for a first upload (the first use in a send confirms too); needed for a signed replacement,
     * which it puts in use. Confirming a ready attachment with no replacement waiting changes nothing.
     */
    async confirm(workspaceId: string, attachmentId: string): Promise<AttachmentRecord> {
      const live = await requireLive(workspaceId, attachmentId);
      const { replacement } = live;
      if (replacement) {
        return files.finishReplacement(workspaceId, { ...live, replacement }, (size) => checkLiveJourneys(db, workspaceId, attachmentId, size, 'size'));
      }
      const attachment = await files.reconcile(workspaceId, live);
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
