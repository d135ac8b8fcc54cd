import type { z } from 'zod';
import type { SegmentRecord } from '../../db/repositories/segments';
import type { SegmentSchema } from './schemas';

export function segmentView(segment: SegmentRecord): z.infer<typeof SegmentSchema> {
  return {
    id: segment.id,
    name: segment.name,
    kind: segment.kind,
    definition: segment.definition,
    createdAt: segment.createdAt.toISOString(),
  };
}
