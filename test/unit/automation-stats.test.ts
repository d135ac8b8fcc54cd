import { nodeStats } from '../../api/automations/stats';
import type { JourneyGraph } from '../../core/journeys/graph';
import type { NodeCounts } from '../../db/repositories/journey-skips';

describe('per-node stats of an automation', () => {
  const graph: JourneyGraph = {
    entry: 'hello',
    nodes: [
      { id: 'hello', type: 'message', label: 'Hello', preferredChannel: 'email', fallbackChain: [], templateByChannel: {}, attachmentIds: [], next: 'pause' },
      { id: 'pause', type: 'wait', durationMs: 1, next: null },
    ],
  };

  it('lists the current version\'s nodes in graph order, zero where nothing was counted, then nodes only earlier versions had', () => {
    const counted: NodeCounts[] = [
      { nodeId: 'gone', skipped: 2, skippedByReason: { no_sender: 2 } },
      { nodeId: 'hello', skipped: 3, skippedByReason: { suppressed: 1, quota_exceeded: 2 } },
    ];
    expect(nodeStats(graph, counted)).toEqual([
      { nodeId: 'hello', nodeType: 'message', label: 'Hello', skipped: 3, skippedByReason: { suppressed: 1, quota_exceeded: 2 } },
      { nodeId: 'pause', nodeType: 'wait', label: 'wait', skipped: 0, skippedByReason: {} },
      { nodeId: 'gone', nodeType: null, label: null, skipped: 2, skippedByReason: { no_sender: 2 } },
    ]);
  });

  it('an automation never published shows only what was counted', () => {
    expect(nodeStats(null, [])).toEqual([]);
  });
});
