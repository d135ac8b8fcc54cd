import type { Scope } from '../../core/scopes';
import { created, ok, type RouteTable } from '../http/route';
import {
  AttachmentDeletedSchema,
  AttachmentDownloadSchema,
  AttachmentEnvelopeSchema,
  AttachmentListQuery,
  AttachmentListSchema,
  AttachmentParams,
  AttachmentUploadSchema,
  CreateAttachmentBody,
  ReplaceAttachmentBody,
} from './schemas';
import type { AttachmentService } from './service';
import { attachmentView } from './views';

/** The spec's `email:send | inbox:send`: either scope is enough. */
const SENDERS: readonly Scope[] = ['email:send', 'inbox:send'];

export function attachmentRoutes(routes: RouteTable, attachments: AttachmentService): void {
  routes.get('/attachments', SENDERS, {
    summary: 'List uploaded attachments, newest first',
    query: AttachmentListQuery,
    responses: { 200: { description: 'Uploads that are not deleted', schema: AttachmentListSchema } },
    handle: async ({ principal, query }) => ok({ data: (await attachments.list(principal.workspaceId, query)).map(attachmentView) }),
  });

  routes.post('/attachments', SENDERS, {
    summary: 'Upload an attachment: directly (base64 content) or through a signed URL (size)',
    body: CreateAttachmentBody,
    bodyLimit: 'large',
    responses: {
      201: {
        description: 'Direct upload: { attachment } (ready). Signed upload: AttachmentUpload (pending until the file is PUT)',
        schema: AttachmentUploadSchema.or(AttachmentEnvelopeSchema),
      },
      422: { description: 'Invalid input, an executable file type, or over 10 MB' },
    },
    handle: async ({ principal, body }) => {
      const outcome = await attachments.create(principal.workspaceId, body);
      const attachment = attachmentView(outcome.attachment);
      return created('uploadUrl' in outcome ? { attachment, uploadUrl: outcome.uploadUrl, expiresIn: outcome.expiresIn } : { attachment });
    },
  });

  routes.get('/attachments/:id', SENDERS, {
    summary: 'An attachment and a signed download URL (valid 15 minutes)',
    params: AttachmentParams,
    responses: { 200: { description: 'The attachment', schema: AttachmentDownloadSchema }, 404: { description: 'No such attachment' } },
    handle: async ({ principal, params }) => {
      const { attachment, downloadUrl } = await attachments.download(principal.workspaceId, params.id);
      return ok({ attachment: attachmentView(attachment), downloadUrl });
    },
  });

  routes.put('/attachments/:id', SENDERS, {
    summary: 'Replace the file under the same id (content, or size for a signed upload then confirm): journeys that attach it keep their version',
    params: AttachmentParams,
    body: ReplaceAttachmentBody,
    bodyLimit: 'large',
    responses: {
      200: {
        description: 'Direct: { attachment } with its new file, ready. Signed: AttachmentUpload (the attachment as it is; its current file stays in use until POST /attachments/:id/confirm)',
        schema: AttachmentUploadSchema.or(AttachmentEnvelopeSchema),
      },
      404: { description: 'No such attachment' },
      409: { description: 'conflict: a file stored from a send (its content or url), not uploaded with POST /attachments' },
      422: { description: 'Invalid input, an executable file type, over 10 MB, or a live journey message that would carry over 25 MB' },
    },
    handle: async ({ principal, params, body }) => {
      const outcome = await attachments.replace(principal.workspaceId, params.id, body);
      const attachment = attachmentView(outcome.attachment);
      return ok('uploadUrl' in outcome ? { attachment, uploadUrl: outcome.uploadUrl, expiresIn: outcome.expiresIn } : { attachment });
    },
  });

  routes.delete('/attachments/:id', SENDERS, {
    summary: 'Delete an attachment; queued sends that name it go out without it',
    params: AttachmentParams,
    responses: {
      200: { description: 'Deleted', schema: AttachmentDeletedSchema },
      404: { description: 'No such attachment' },
      409: { description: 'An active or paused automation attaches the file' },
    },
    handle: async ({ principal, params }) => {
      await attachments.remove(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });

  routes.post('/attachments/:id/confirm', SENDERS, {
    summary: 'Confirm a signed upload, or put a signed replacement in use: the stored size and type are checked against the declared ones',
    params: AttachmentParams,
    responses: {
      200: { description: 'The attachment, ready', schema: AttachmentEnvelopeSchema },
      404: { description: 'No such attachment' },
      422: { description: '`attachment_rejected`: nothing uploaded yet, or the file differs from what was declared; or a replacement a live journey message could not carry (over 25 MB)' },
    },
    handle: async ({ principal, params }) =>
      ok({ attachment: attachmentView(await attachments.confirm(principal.workspaceId, params.id)) }),
  });
}
