import { z } from 'zod';
import { offset } from '../http/formats';
import { AttachmentContentTypeSchema, AttachmentFilenameSchema, Base64Schema } from '../http/attachment-source-schemas';
import { ATTACHMENT_LIMITS } from '../../core/attachments';

/** The byte length a signed upload will PUT to its uploadUrl. */
const SignedSizeSchema = z.number().int().min(1).max(ATTACHMENT_LIMITS.fileBytes);

/** A file comes one way or the other: content in the body (direct) or size (signed), exactly one of them. */
function contentOrSize(direct: string, signed: string) {
  return (body: { content?: string; size?: number }, context: z.RefinementCtx) => {
    if ((body.content === undefined) === (body.size === undefined)) {
      context.addIssue({ code: 'custom', message: `Give content (${direct}) or size (${signed}), not both` });
    }
  };
}

const CONTENT_XOR_SIZE = [{ required: ['content'], properties: { size: false } }, { required: ['size'], properties: { content: false } }];

export const CreateAttachmentBody = z
  .strictObject({
    filename: AttachmentFilenameSchema,
    content: Base64Schema.optional().describe('Direct upload: the file in base64 (at most 10 MB decoded); the attachment is ready at once'),
    contentType: AttachmentContentTypeSchema.optional(),
    size: SignedSizeSchema.optional().describe('Signed upload: the exact byte length you will PUT to uploadUrl; the attachment is pending until then'),
  })
  .superRefine(contentOrSize('direct upload', 'signed upload'))
  .meta({ id: 'CreateAttachment', description: 'content (direct upload) or size (signed upload), not both', oneOf: CONTENT_XOR_SIZE });

export const ReplaceAttachmentBody = z
  .strictObject({
    filename: AttachmentFilenameSchema.optional().describe('The new name; the current one is kept when absent'),
    content: Base64Schema.optional().describe('Direct replacement: the new file in base64 (at most 10 MB decoded); in use at once'),
    contentType: AttachmentContentTypeSchema.optional().describe('Inferred from the (new) file name when absent, else the current type is kept'),
    size: SignedSizeSchema.optional().describe(
      'Signed replacement: the exact byte length you will PUT to uploadUrl; the current file stays in use until you confirm',
    ),
  })
  .superRefine(contentOrSize('direct replacement', 'signed replacement'))
  .meta({
    id: 'ReplaceAttachment',
    description:
      'A new file under the same id, content (direct) or size (signed, then POST /attachments/:id/confirm), not both: ' +
      'journeys that attach it keep their version and send the new file from their next message on',
    oneOf: CONTENT_XOR_SIZE,
  });

export const AttachmentParams = z.object({ id: z.uuid() });

export const AttachmentListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const AttachmentSchema = z
  .object({
    id: z.uuid(),
    filename: z.string(),
    contentType: z.string(),
    size: z.number().int().describe('Bytes; for a pending upload, the declared size'),
    status: z.enum(['pending', 'ready']).describe('pending until the signed upload is confirmed or first used'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Attachment' });

export const AttachmentEnvelopeSchema = z.object({ attachment: AttachmentSchema }).meta({ id: 'AttachmentEnvelope' });

export const AttachmentListSchema = z.object({ data: z.array(AttachmentSchema) }).meta({ id: 'AttachmentList' });

export const AttachmentUploadSchema = z
  .object({
    attachment: AttachmentSchema,
    uploadUrl: z.string().describe('PUT the file here with the declared Content-Type and Content-Length'),
    expiresIn: z.number().int().describe('Seconds the uploadUrl stays valid'),
  })
  .meta({ id: 'AttachmentUpload' });

export const AttachmentDownloadSchema = z
  .object({ attachment: AttachmentSchema, downloadUrl: z.string().describe('Signed, valid 15 minutes') })
  .meta({ id: 'AttachmentDownload' });

export const AttachmentDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'AttachmentDeleted' });

export type CreateAttachmentInput = z.infer<typeof CreateAttachmentBody>;
export type ReplaceAttachmentInput = z.infer<typeof ReplaceAttachmentBody>;
