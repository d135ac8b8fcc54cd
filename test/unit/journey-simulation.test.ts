import type { AudienceRules } from '../../core/audience-rules';
import type { Channel } from '../../core/identities';
import { DEFAULT_JOURNEY_SETTINGS, type JourneySettings } from '../../core/journeys/delivery-window';
import type { EventMatch, JourneyGraph, JourneyNode } from '../../core/journeys/graph';
import { matchSynthetic } from '../../core/journeys/simulated-audience';
import { type SimulatedEvent, type SimulationInput, simulateJourney, waitEnd } from '../../core/journeys/simulation';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = new Date('2026-03-02T10:00:00Z');
const TEMPLATE = '00000000-0000-4000-8000-000000000001';
const SMS_TEMPLATE = '00000000-0000-4000-8000-000000000002';

const at = (ms: number) => new Date(T0.getTime() + ms);
const message = (id: string, next: string | null, extra: Partial<JourneyNode> = {}): JourneyNode => ({
  id, type: 'message', preferredChannel: 'email', fallbackChain: ['whatsapp'], templateByChannel: { email: TEMPLATE, whatsapp: SMS_TEMPLATE }, attachmentIds: [], next, ...extra,
} as JourneyNode);
const wait = (id: string, durationMs: number, next: string | null): JourneyNode => ({ id, type: 'wait', durationMs, next });
const event = (name: string, ms: number, properties: Record<string, unknown> = {}): SimulatedEvent => ({ name, properties, at: at(ms) });

function run(graph: JourneyGraph, overrides: Partial<SimulationInput> = {}) {
  const reach: Record<Channel, string | null> = { email: 'ada@example.com', whatsapp: '+33612345678', telegram: null };
  return simulateJourney({
    graph,
    goal: null,
    startAt: T0,
    events: [],
    settings: DEFAULT_JOURNEY_SETTINGS,
    timeZone: 'UTC',
    recentSends: [],
    reach: (channel) => reach[channel],
    branch: () => false,
    ...overrides,
  });
}

/** welcome → 2 days → tips → 3 days → offer. */
const threeSteps: JourneyGraph = {
  entry: 'welcome',
  nodes: [message('welcome', 'w1'), wait('w1', 2 * DAY, 'tips'), message('tips', 'w2'), wait('w2', 3 * DAY, 'offer'), message('offer', null)],
};
const purchase: EventMatch = { event: 'purchase', match: {} };

describe('a journey simulated under a fake clock', () => {
  it('a 3-step journey with waits of days sends three messages at the waits\' ends and completes off the graph', () => {
    const result = run(threeSteps);
    expect(result.messages.map((sent) => [sent.nodeId, sent.channel, sent.to, sent.at.toISOString()])).toEqual([
      ['welcome', 'email', 'ada@example.com', T0.toISOString()],
      ['tips', 'email', 'ada@example.com', at(2 * DAY).toISOString()],
      ['offer', 'email', 'ada@example.com', at(5 * DAY).toISOString()],
    ]);
    expect(result.path.map((step) => step.outcome)).toEqual(['sent', 'waited', 'sent', 'waited', 'sent']);
    expect(result.outcome).toEqual({ status: 'completed', exitReason: 'completed', at: at(5 * DAY) });
  });

  it('a goal event mid-wait exits the run goal_reached at the event\'s moment, and nothing after it is sent', () => {
    const result = run(threeSteps, { goal: purchase, events: [event('purchase', 3 * DAY)] });
    expect(result.messages.map((sent) => sent.nodeId)).toEqual(['welcome', 'tips']);
    expect(result.path.at(-1)).toMatchObject({ nodeId: 'w2', outcome: 'goal_reached' });
    expect(result.outcome).toEqual({ status: 'exited', exitReason: 'goal_reached', at: at(3 * DAY) });
  });

  it('a goal event before the start does not count; one with other properties than the goal\'s match does not either', () => {
    const goal: EventMatch = { event: 'purchase', match: { plan: 'pro' } };
    const result = run(threeSteps, { goal, events: [event('purchase', -HOUR, { plan: 'pro' }), event('purchase', DAY, { plan: 'free' })] });
    expect(result.outcome.status).toBe('completed');
    expect(run(threeSteps, { goal, events: [event('purchase', DAY, { plan: 'pro' })] }).outcome).toMatchObject({ exitReason: 'goal_reached', at: at(DAY) });
  });

  const waitForClick: JourneyGraph = {
    entry: 'ask',
    nodes: [
      message('ask', 'listen'),
      { id: 'listen', type: 'wait_for_event', event: 'clicked', match: { button: 'yes' }, timeoutMs: 2 * DAY, onEvent: 'thanks', onTimeout: 'nudge' },
      message('thanks', null),
      message('nudge', null),
    ],
  };

  it('wait_for_event takes the event branch at the event\'s moment when it arrives in time', () => {
    const result = run(waitForClick, { events: [event('clicked', DAY, { button: 'yes' })] });
    expect(result.path.map((step) => [step.nodeId, step.outcome])).toEqual([['ask', 'sent'], ['listen', 'event'], ['thanks', 'sent']]);
    expect(result.messages[1].at).toEqual(at(DAY));
  });

  it('wait_for_event takes the timeout branch at the timeout when the event is late, before the node, or does not match', () => {
    for (const events of [[event('clicked', 3 * DAY, { button: 'yes' })], [event('clicked', -1, { button: 'yes' })], [event('clicked', DAY, { button: 'no' })]]) {
      const result = run(waitForClick, { events });
      expect(result.path.map((step) => step.outcome)).toEqual(['sent', 'timeout', 'sent']);
      expect(result.messages[1]).toMatchObject({ nodeId: 'nudge', at: at(2 * DAY) });
    }
  });

  it('an event answers one wait_for_event only: a second wait for the same event needs a second event', () => {
    const twice: JourneyGraph = {
      entry: 'a',
      nodes: [
        { id: 'a', type: 'wait_for_event', event: 'ping', match: {}, timeoutMs: DAY, onEvent: 'b', onTimeout: null },
        { id: 'b', type: 'wait_for_event', event: 'ping', match: {}, timeoutMs: DAY, onEvent: 'yes', onTimeout: 'no' },
        { id: 'yes', type: 'exit' },
        { id: 'no', type: 'exit', label: 'gave up' },
      ],
    };
    expect(run(twice, { events: [event('ping', HOUR)] }).path.map((step) => step.outcome)).toEqual(['event', 'timeout', 'exit']);
    const both = run(twice, { events: [event('ping', HOUR), event('ping', 2 * HOUR)] });
    expect(both.path.map((step) => step.nodeId)).toEqual(['a', 'b', 'yes']);
    expect(both.outcome).toEqual({ status: 'completed', exitReason: 'exit_node', at: at(2 * HOUR) });
  });

  it('a branch goes to then or else as the rule answers at that moment', () => {
    const graph: JourneyGraph = {
      entry: 'w',
      nodes: [
        wait('w', DAY, 'vip'),
        { id: 'vip', type: 'branch', condition: { type: 'group', operator: 'and', rules: [] }, then: 'gold', else: 'plain' },
        message('gold', null),
        message('plain', null),
      ],
    };
    const asked: Date[] = [];
    const result = run(graph, { branch: (_node, moment) => (asked.push(moment), true) });
    expect(asked).toEqual([at(DAY)]);
    expect(result.path.map((step) => [step.nodeId, step.outcome])).toEqual([['w', 'waited'], ['vip', 'then'], ['gold', 'sent']]);
    expect(run(graph).messages.map((sent) => sent.nodeId)).toEqual(['plain']);
  });

  it('a message goes on the first channel of preferred then fallbackChain that reaches the contact, and is skipped when none does', () => {
    const graph: JourneyGraph = { entry: 'm', nodes: [message('m', null)] };
    const phoneOnly = run(graph, { reach: (channel) => (channel === 'whatsapp' ? '+33612345678' : null) });
    expect(phoneOnly.messages).toEqual([{ nodeId: 'm', channel: 'whatsapp', to: '+33612345678', templateId: SMS_TEMPLATE, at: T0 }]);
    const nobody = run(graph, { reach: () => null });
    expect(nobody.messages).toEqual([]);
    expect(nobody.path).toEqual([{ nodeId: 'm', nodeType: 'message', label: 'message', at: T0, outcome: 'unreachable' }]);
    expect(nobody.outcome.status).toBe('completed');
  });

  it('quiet hours move a send to their end in the contact\'s zone, and say so', () => {
    const settings: JourneySettings = { ...DEFAULT_JOURNEY_SETTINGS, quietHours: { start: '21:00', end: '08:00' } };
    // 23:00 in Paris (UTC+1 in winter): the message waits for 08:00 Paris, 07:00 UTC.
    const result = run({ entry: 'm', nodes: [message('m', null)] }, { settings, timeZone: 'Europe/Paris', startAt: new Date('2026-01-15T22:00:00Z') });
    expect(result.messages[0]).toMatchObject({
      at: new Date('2026-01-16T07:00:00Z'),
      deferred: { from: new Date('2026-01-15T22:00:00Z'), reason: 'quiet_hours' },
    });
    expect(result.outcome.at).toEqual(new Date('2026-01-16T07:00:00Z'));
  });

  it('a frequency cap delays a message until the oldest counted send leaves the window, counting real and simulated sends', () => {
    const settings: JourneySettings = { ...DEFAULT_JOURNEY_SETTINGS, frequencyCaps: [{ channel: 'email', limit: 2, windowMs: DAY }] };
    const result = run(
      { entry: 'a', nodes: [message('a', 'b'), message('b', null)] },
      { settings, recentSends: [{ channel: 'email', at: at(-20 * HOUR) }] },
    );
    expect(result.messages.map((sent) => [sent.at, sent.deferred?.reason])).toEqual([
      [T0, undefined],
      [at(4 * HOUR), 'frequency_cap'],
    ]);
  });

  it('a goal reached while a message is held back exits without sending it', () => {
    const settings: JourneySettings = { ...DEFAULT_JOURNEY_SETTINGS, quietHours: { start: '00:00', end: '12:00' } };
    const result = run({ entry: 'm', nodes: [message('m', null)] }, { settings, goal: purchase, events: [event('purchase', HOUR)] });
    expect(result.messages).toEqual([]);
    expect(result.path[0].outcome).toBe('goal_reached');
    expect(result.outcome).toEqual({ status: 'exited', exitReason: 'goal_reached', at: at(HOUR) });
  });

  it('waits: until in the past ends at once; atLocalTime goes on to the next such local time after the duration', () => {
    expect(waitEnd({ id: 'w', type: 'wait', until: '2020-01-01T00:00:00Z', next: null }, T0, 'UTC')).toEqual(T0);
    expect(waitEnd({ id: 'w', type: 'wait', until: '2026-03-05T00:00:00Z', next: null }, T0, 'UTC')).toEqual(new Date('2026-03-05T00:00:00Z'));
    // Monday 10:00 UTC + 1 day → Tuesday 10:00 UTC = 19:00 Tokyo; 09:00 Tokyo next is Wednesday 00:00 UTC.
    expect(waitEnd({ id: 'w', type: 'wait', durationMs: DAY, atLocalTime: '09:00', next: null }, T0, 'Asia/Tokyo')).toEqual(new Date('2026-03-04T00:00:00Z'));
  });
});

describe('a simulated journey\'s edge cases', () => {
  it('when the goal and a wait_for_event want the same event, the goal wins', () => {
    const graph: JourneyGraph = {
      entry: 'e',
      nodes: [{ id: 'e', type: 'wait_for_event', event: 'purchase', match: {}, timeoutMs: DAY, onEvent: 'm', onTimeout: null }, message('m', null)],
    };
    const result = run(graph, { goal: purchase, events: [event('purchase', HOUR)] });
    expect(result.path).toEqual([{ nodeId: 'e', nodeType: 'wait_for_event', label: 'wait for event', at: T0, outcome: 'goal_reached' }]);
    expect(result.outcome).toEqual({ status: 'exited', exitReason: 'goal_reached', at: at(HOUR) });
  });

  it('a wait to a local time follows the contact\'s zone across the spring-forward night', () => {
    // Saturday 28 March 2026, 12:00 Paris (11:00Z); a day later, then 09:00 Paris, which is 07:00Z after the jump.
    const graph: JourneyGraph = { entry: 'w', nodes: [{ id: 'w', type: 'wait', durationMs: DAY, atLocalTime: '09:00', next: 'm' }, message('m', null)] };
    const result = run(graph, { startAt: new Date('2026-03-28T11:00:00Z'), timeZone: 'Europe/Paris' });
    expect(result.messages[0].at).toEqual(new Date('2026-03-30T07:00:00Z'));
  });

  it('an `any` cap counts the simulated sends of every channel', () => {
    const settings: JourneySettings = { ...DEFAULT_JOURNEY_SETTINGS, frequencyCaps: [{ channel: 'any', limit: 1, windowMs: 6 * HOUR }] };
    const chat = (id: string, next: string | null) => message(id, next, { preferredChannel: 'whatsapp', fallbackChain: [] });
    const result = run({ entry: 'a', nodes: [message('a', 'b'), chat('b', null)] }, { settings });
    expect(result.messages.map((sent) => [sent.channel, sent.at, sent.deferred?.reason])).toEqual([['email', T0, undefined], ['whatsapp', at(6 * HOUR), 'frequency_cap']]);
  });

  it('a stored graph that loops is refused rather than run forever', () => {
    const looping: JourneyGraph = { entry: 'a', nodes: [wait('a', HOUR, 'b'), wait('b', HOUR, 'a')] };
    expect(() => run(looping)).toThrow('cycle');
  });
});

describe('a synthetic contact\'s branch rules, in memory', () => {
  const rules = (...conditions: AudienceRules['rules']): AudienceRules => ({ type: 'group', operator: 'and', rules: conditions });
  const contact = {
    attributes: { plan: 'pro', score: 7, tags: ['a', 'b'], birthday: '2026-03-01' },
    channels: new Set<Channel>(['email']),
    events: [event('purchase', -DAY, { sku: 'x' }), event('purchase', -10 * DAY), event('purchase', HOUR)],
  };

  it('attribute operators answer as the segment SQL does for untyped values', () => {
    const yes = (condition: AudienceRules['rules'][number]) => matchSynthetic(rules(condition), contact, T0).matches;
    expect(yes({ type: 'attribute', key: 'plan', operator: 'eq', value: 'pro' })).toBe(true);
    expect(yes({ type: 'attribute', key: 'plan', operator: 'neq', value: 'pro' })).toBe(false);
    expect(yes({ type: 'attribute', key: 'missing', operator: 'neq', value: 'pro' })).toBe(true);
    expect(yes({ type: 'attribute', key: 'plan', operator: 'contains', value: 'PR' })).toBe(true);
    expect(yes({ type: 'attribute', key: 'tags', operator: 'contains', value: 'a' })).toBe(true);
    expect(yes({ type: 'attribute', key: 'score', operator: 'gt', value: 5 })).toBe(true);
    expect(yes({ type: 'attribute', key: 'score', operator: 'lte', value: 6 })).toBe(false);
    expect(yes({ type: 'attribute', key: 'score', operator: 'between', value: [7, 9] })).toBe(true);
    expect(yes({ type: 'attribute', key: 'plan', operator: 'in', value: ['free', 'pro'] })).toBe(true);
    expect(yes({ type: 'attribute', key: 'plan', operator: 'not_in', value: ['free', 'pro'] })).toBe(false);
    expect(yes({ type: 'attribute', key: 'plan', operator: 'exists' })).toBe(true);
    expect(yes({ type: 'attribute', key: 'birthday', operator: 'within_last', days: 2 })).toBe(true);
    expect(yes({ type: 'attribute', key: 'birthday', operator: 'before', value: '2026-02-01' })).toBe(false);
  });

  it('identity and event conditions count the given addresses and the events up to the branch\'s moment', () => {
    const yes = (condition: AudienceRules['rules'][number], now = T0) => matchSynthetic(rules(condition), contact, now).matches;
    expect(yes({ type: 'identity', operator: 'has', channel: 'email', consent: 'opted_in' })).toBe(true);
    expect(yes({ type: 'identity', operator: 'has', channel: 'telegram' })).toBe(false);
    expect(yes({ type: 'identity', operator: 'has_not', channel: 'email', verified: false })).toBe(true);
    expect(yes({ type: 'event', name: 'purchase', operator: 'at_least', count: 2 })).toBe(true);
    expect(yes({ type: 'event', name: 'purchase', operator: 'at_least', count: 2, withinDays: 7 })).toBe(false);
    expect(yes({ type: 'event', name: 'purchase', operator: 'at_least', count: 2, withinDays: 7 }, at(2 * HOUR))).toBe(true);
    expect(yes({ type: 'event', name: 'purchase', operator: 'at_most', count: 0, properties: { sku: 'x' } })).toBe(false);
  });

  it('tag, list, created and engagement conditions are taken as false and named', () => {
    const tag = '00000000-0000-4000-8000-0000000000aa';
    const result = matchSynthetic({ type: 'group', operator: 'or', rules: [{ type: 'tag', operator: 'has_not', tagId: tag }, { type: 'engagement', action: 'opened', operator: 'at_least', count: 1 }] }, contact, T0);
    expect(result).toEqual({ matches: false, unevaluated: ['tag condition (tag has_not)', 'engagement condition (engagement at_least)'] });
  });
});
