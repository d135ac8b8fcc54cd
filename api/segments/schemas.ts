import { z } from 'zod';
import { text } from '../http/formats';
import { AudienceRulesInput, AudienceRulesSchema } from '../../core/audience-rules';

export const CreateSegmentBody = z
  .object({ name: text(200), definition: AudienceRulesInput })
  .meta({ id: 'CreateSegment' });

export const UpdateSegmentBody = z
  .object({ name: text(200).optional(), definition: AudienceRulesInput.optional() })
  .meta({ id: 'UpdateSegment' });

export const PreviewSegmentBody = z.object({ definition: AudienceRulesInput }).meta({ id: 'PreviewSegment' });

export const SegmentSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.string().describe('dynamic: the rules are evaluated each time the segment is used'),
    definition: AudienceRulesSchema,
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Segment' });

export const SegmentListSchema = z.object({ data: z.array(SegmentSchema) }).meta({ id: 'SegmentList' });

export const SegmentPreviewSchema = z
  .object({
    count: z.int().describe('Contacts the rules match now (exact)'),
    sample: z
      .array(z.object({ name: z.string().nullable(), email: z.string().nullable() }))
      .max(5)
      .describe('Up to 5 matching contacts, in no particular order: name from firstName and lastName (else the name attribute), the primary email'),
  })
  .meta({ id: 'SegmentPreview' });

export const SegmentParams = z.object({ id: z.uuid() });

export const SegmentDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'SegmentDeleted' });
