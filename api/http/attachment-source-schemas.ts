import { z } from 'zod';
import { BASE64_PATTERN, CONTENT_ID_PATTERN, FILENAME_PATTERN, MEDIA_TYPE_PATTERN } from './formats';
import { ATTACHMENT_LIMITS, contentIdProblem, contentTypeProblem, filenameProblem } from '../../core/attachments';

const checked = (problem: (value: string) => string | null) => (value: string, context: z.RefinementCtx) => {
  const message = problem(value);
  if (message) context.addIssue({ code: 'custom', message });
};

export const AttachmentFilenameSchema = z
  .string()
  .min(ATTACHMENT_LIMITS.filename.min)
  .max(ATTACHMENT_LIMITS.filename.max)
  .superRefine(checked(filenameProblem))
  .describe('Shown to the recipient. Executable types (exe, bat, js, jar, msi, vbs, ...) are refused, however disguised')
  .meta({ pattern: FILENAME_PATTERN });

export const AttachmentContentTypeSchema = z
  .string()
  .min(ATTACHMENT_LIMITS.contentType.min)
  .max(ATTACHMENT_LIMITS.contentType.max)
  .superRefine(checked(contentTypeProblem))
  .describe('Inferred from the file name when absent. A media type whose registered extension is executable is refused')
  .meta({ pattern: MEDIA_TYPE_PATTERN });

const contentId = z
  .string()
  .min(ATTACHMENT_LIMITS.contentId.min)
  .max(ATTACHMENT_LIMITS.contentId.max)
  .superRefine(checked(contentIdProblem))
  .describe('Makes the attachment inline, referenced in the HTML as cid:<contentId>')
  .meta({ pattern: CONTENT_ID_PATTERN });

export const Base64Schema = z.string().min(1).describe('The file in base64, without a data: prefix').meta({ pattern: BASE64_PATTERN });

/**
 * One item of a send's `attachments` (the spec's Attachment sources), shared by every send endpoint:
 * exactly one of id, content or url. Resolved by services/attachment-sources.ts.
 */
export const AttachmentSourceSchema = z
  .strictObject({
    id: z.uuid().optional().describe('An attachment uploaded to this workspace (the recommended path; 422 when it names none)'),
    filename: AttachmentFilenameSchema.optional().describe('Required with content or url; with id it renames the file for this send'),
    content: Base64Schema.optional(),
    url: z.url({ protocol: /^https$/ }).optional().describe('A public https URL, fetched once when the send is accepted'),
    contentType: AttachmentContentTypeSchema.optional(),
    contentId: contentId.optional(),
  })
  .superRefine((item, context) => {
    const sources = [item.id, item.content, item.url].filter((source) => source !== undefined).length;
    if (sources !== 1) context.addIssue({ code: 'custom', message: 'Give exactly one of id, content or url' });
    if (item.id === undefined && item.filename === undefined) {
      context.addIssue({ code: 'custom', path: ['filename'], message: 'Required with content or url' });
    }
  })
  .meta({
    id: 'AttachmentSource',
    description: 'Exactly one of id, content or url; filename is required with content or url',
    // `false`: the property must be absent.
    oneOf: [
      { required: ['id'], properties: { content: false, url: false } },
      { required: ['content', 'filename'], properties: { id: false, url: false } },
      { required: ['url', 'filename'], properties: { id: false, content: false } },
    ],
  });

export const AttachmentSourcesSchema = z
  .array(AttachmentSourceSchema)
  .max(ATTACHMENT_LIMITS.perMessage)
  .describe('At most 20 files, 10 MB each, 25 MB together');

