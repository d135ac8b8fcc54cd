import type { Sequelize } from 'sequelize';
import { assertAudienceRules, referencedIds } from '../../core/audience-checks';
import type { AudienceRules } from '../../core/audience-rules';
import { fieldsByKey } from '../../core/custom-fields';
import { AppError } from '../../core/errors';
import { listCustomFields } from '../../db/repositories/custom-fields';
import { existingListIds } from '../../db/repositories/lists';
import { deleteSegment, findSegment, insertSegment, listSegments, previewAudience, updateSegment } from '../../db/repositories/segments';
import { findTags } from '../../db/repositories/tags';

/** `audienceDb`: the pool of audience queries (db/audience-session.ts), where previews run. */
export function createSegmentService(db: Sequelize, audienceDb: Sequelize = db) {
  /**
   * The checks that need the workspace: attribute conditions typed by its custom fields, and tags and
   * lists that exist in it (another workspace's id is as unknown as a made-up one). Returns the fields,
   * which compiling needs too.
   */
  async function check(workspaceId: string, rules: AudienceRules) {
    const ids = referencedIds(rules);
    const [fields, tags, listIds] = await Promise.all([
      listCustomFields(db, workspaceId),
      findTags(db, workspaceId, ids.tagIds),
      existingListIds(db, workspaceId, ids.listIds),
    ]);
    const byKey = fieldsByKey(fields);
    assertAudienceRules(rules, { fields: byKey, tagIds: new Set(tags.map((tag) => tag.id)), listIds });
    return byKey;
  }

  return {
    list: (workspaceId: string) => listSegments(db, workspaceId),

    async get(workspaceId: string, segmentId: string) {
      const segment = await findSegment(db, workspaceId, segmentId);
      if (!segment) throw AppError.notFound('Segment');
      return segment;
    },

    async create(workspaceId: string, input: { name: string; definition: AudienceRules }) {
      await check(workspaceId, input.definition);
      return insertSegment(db, workspaceId, input);
    },

    async update(workspaceId: string, segmentId: string, change: { name?: string; definition?: AudienceRules }) {
      if (!(await findSegment(db, workspaceId, segmentId))) throw AppError.notFound('Segment');
      if (change.definition) await check(workspaceId, change.definition);
      const updated = await updateSegment(db, workspaceId, segmentId, change);
      if (!updated) throw AppError.notFound('Segment');
      return updated;
    },

    async remove(workspaceId: string, segmentId: string): Promise<void> {
      if (!(await deleteSegment(db, workspaceId, segmentId))) throw AppError.notFound('Segment');
    },

    async preview(workspaceId: string, rules: AudienceRules) {
      const fields = await check(workspaceId, rules);
      return previewAudience(audienceDb, workspaceId, rules, { fields, now: new Date() });
    },
  };
}

export type SegmentService = ReturnType<typeof createSegmentService>;
