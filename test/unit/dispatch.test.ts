import { dispatchClassOf, fairShares, inFlightBounds, temporalPriorityOf } from '../../core/dispatch';

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
});
