import { randomUUID } from 'node:crypto';
import { analyticsSyncIdOf, parseAnalyticsSyncId } from '../../core/analytics/sync';

describe('the id a sync\'s status URL carries', () => {
  it('names the source and the run, and reads back to both for Matomo and CSV alike', () => {
    const runId = randomUUID();
    const attachmentId = randomUUID();
    expect(parseAnalyticsSyncId(analyticsSyncIdOf({ kind: 'matomo' }, runId))).toEqual({ source: { kind: 'matomo' }, runId });
    expect(parseAnalyticsSyncId(analyticsSyncIdOf({ kind: 'csv', attachmentId }, runId))).toEqual({ source: { kind: 'csv', attachmentId }, runId });
  });

  it('anything else names no sync', () => {
    for (const id of ['', 'matomo', `matomo.${randomUUID()}.x`, `csv.${randomUUID()}`, `other.${randomUUID()}`, `matomo.../${randomUUID()}`]) {
      expect({ id, parsed: parseAnalyticsSyncId(id) }).toEqual({ id, parsed: null });
    }
  });
});
