import type { Sequelize } from 'sequelize';
import { fieldsByKey } from '../../core/custom-fields';
import { AppError } from '../../core/errors';
import type { ContactFilters } from '../../db/repositories/contacts';
import { listCustomFields } from '../../db/repositories/custom-fields';
import { findSegment } from '../../db/repositories/segments';
import { audienceCondition } from '../../db/segment-query';

/**
 * A segment of the workspace as a condition on `contacts c` (the contact list's `segmentId` filter and the
 * export's): its rule tree compiled with the workspace's custom fields, as of now. An unknown segment is a 404.
 */
export async function segmentCondition(db: Sequelize, workspaceId: string, segmentId: string): Promise<NonNullable<ContactFilters['condition']>> {
  const segment = await findSegment(db, workspaceId, segmentId);
  if (!segment) throw AppError.notFound('Segment');
  const context = { fields: fieldsByKey(await listCustomFields(db, workspaceId)), now: new Date() };
  return (params, workspace) => audienceCondition(segment.definition, context, params, workspace);
}
