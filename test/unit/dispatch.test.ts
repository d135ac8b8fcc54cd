import {
  type DispatchedMessage, dispatchClassOf, fairShares, inFlightBounds, planTransactional, temporalPriorityOf, TRANSACTIONAL_BATCH_SIZE,
  transactionalBatchMinimum, BATCH_DEFERRAL_MS, forgetStaleGathering,
} from '../../core/dispatch';

const settings = { ratePerSecond: 14, leadTimeMs: 4_000, bulkLeadTimeMs: 30_000, batchSize: 500, minimum: 20, maximum: 400 };

describe('the delivery engine rules', () => {
  it('in flight: the provider rate times the lead time, within the transactional minimum and maximum, and at least a batch of bulk', () => {
    expect(inFlightBounds(settings)).toEqual({ transactional: 56, bulk: 500 });
    expect(inFlightBounds({ ...settings, ratePerSecond: 1 })).toEqual({ transactional: 20, bulk: 500 });
    expect(inFlightBounds({ ...settings, ratePerSecond: 1_000 })).toEqual({ transactional: 400, bulk: 30_000 });
  });

  it('fair shares follow the weights, give everyone at least one slot, and give nothing without capacity', () => {
    const a = { workspaceId: 'a', weight: 1 };
    const b = { workspaceId: 'b', weight: 1 };
    const pro = { workspaceId: 'p', weight: 4 };
    expect(fairShares(30, [a, b, pro])).toEqual([5, 5, 20]);
    expect(fairShares(2, [a, b, pro])).toEqual([1, 1, 2]);
    expect(fairShares(0, [a, b])).toEqual([0, 0]);
    expect(fairShares(10, [])).toEqual([]);
  });

  it('transactional messages go one workflow each and first; journeys before campaigns; the control plane before all', () => {
    expect(dispatchClassOf('transactional')).toBe('transactional');
    expect(dispatchClassOf('campaign')).toBe('bulk');
    expect(dispatchClassOf('automation')).toBe('bulk');
    expect([temporalPriorityOf('transactional'), temporalPriorityOf('automation'), temporalPriorityOf('campaign')]).toEqual([2, 3, 4]);
  });

  describe('adaptive batching of transactional messages', () => {
    const message = (workspaceId: string, i: number): DispatchedMessage => ({
      messageId: `${workspaceId}-${i}`, workspaceId, kind: 'transactional', channel: 'email', contactId: null, campaignId: null, enrollmentId: null, round: 0,
    });
    const of = (workspaceId: string, count: number) => Array.from({ length: count }, (_, i) => message(workspaceId, i));

    it('a shallow workspace keeps one workflow per message; a backlogged one goes in batches of at most 50', () => {
      const plan = planTransactional([...of('quiet', 3), ...of('busy', 120)], new Set(['busy']), 25, () => true);
      expect(plan.single.map((m) => m.messageId)).toEqual(['quiet-0', 'quiet-1', 'quiet-2']);
      expect(plan.batches.map((batch) => batch.length)).toEqual([50, 50, 20]);
      expect(plan.batches.flat().every((m) => m.workspaceId === 'busy')).toBe(true);
      expect(plan.deferred).toEqual([]);
    });

    it('a backlogged workspace with less than the minimum this round is deferred while it may be, then batched', () => {
      expect(planTransactional(of('busy', 4), new Set(['busy']), 25, () => true).deferred).toHaveLength(4);
      const late = planTransactional(of('busy', 4), new Set(['busy']), 25, () => false);
      expect(late.batches.map((batch) => batch.length)).toEqual([4]);
      expect(late.deferred).toEqual([]);
    });

    it('a gathering that ended without a batch is forgotten after two windows, one still under way is kept', () => {
      const now = 1_000_000;
      const gathering = new Map([['email/left', now - 2 * BATCH_DEFERRAL_MS], ['email/gathering', now - BATCH_DEFERRAL_MS + 1]]);
      forgetStaleGathering(gathering, now);
      expect([...gathering.keys()]).toEqual(['email/gathering']);
    });

    it('the minimum is half a batch, or half the bound when that is smaller; batches fit MessageIds in 2 KB', () => {
      expect(transactionalBatchMinimum(300)).toBe(25);
      expect(transactionalBatchMinimum(15)).toBe(8);
      expect(transactionalBatchMinimum(1)).toBe(1);
      const ids = Array.from({ length: TRANSACTIONAL_BATCH_SIZE }, () => '00000000-0000-4000-8000-000000000000');
      expect(Buffer.byteLength(JSON.stringify(ids))).toBeLessThanOrEqual(2_048);
    });
  });
});
