import { isAppError } from '../../core/errors';
import {
  capRelease,
  contactTimeZone,
  DEFAULT_JOURNEY_SETTINGS,
  type FrequencyCap,
  inQuietHours,
  type JourneySettings,
  nextAllowedMoment,
  type RecentSend,
} from '../../core/journeys/delivery-window';
import { MAX_DURATION_MS, parseDuration } from '../../core/journeys/durations';
import { type GraphInput, GraphSchema } from '../../core/journeys/graph-schema';
import { type JourneyGraph, matchedInVersion, matchesEvent, nodeLabelOf } from '../../core/journeys/graph';
import { isTimeZone, localMinutes, minutesOf, nextLocalTime, zonedMoment } from '../../core/journeys/local-time';
import { checkedGraph, graphIssues, listenedEvents, templateIdsOf, whatsAppWindowWarnings } from '../../core/journeys/validation';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T1 = '00000000-0000-4000-8000-000000000001';
const T2 = '00000000-0000-4000-8000-000000000002';

describe('journey durations', () => {
  it('ISO 8601 weeks, days, hours, minutes and seconds, and plain seconds, become milliseconds', () => {
    expect(parseDuration('P3D')).toBe(3 * DAY);
    expect(parseDuration('PT12H')).toBe(12 * HOUR);
    expect(parseDuration('P1DT6H')).toBe(DAY + 6 * HOUR);
    expect(parseDuration('P2W')).toBe(14 * DAY);
    expect(parseDuration('PT90M')).toBe(90 * MINUTE);
    expect(parseDuration('PT1.5S')).toBe(1_500);
    expect(parseDuration('P1W2DT3H4M5S')).toBe(9 * DAY + 3 * HOUR + 4 * MINUTE + 5 * SECOND);
    expect(parseDuration(60)).toBe(MINUTE);
    expect(parseDuration(0.5)).toBe(500);
  });

  it('zero, negative, empty, calendar units, lowercase, a dangling T and anything over a year are refused', () => {
    for (const bad of ['P', 'PT', 'P1DT', 'P0D', 'PT0S', 'P1Y', 'P1M', 'p1d', '1 day', '', 'P-1D', 'P367D', 'P53W', 'PT1.S', 'P99999999999999999999D']) {
      expect([bad, parseDuration(bad)]).toEqual([bad, null]);
    }
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, MAX_DURATION_MS / 1000 + 1]) expect(parseDuration(bad)).toBeNull();
  });

  it('a year of 366 days is the longest wait accepted', () => {
    expect(parseDuration('P366D')).toBe(MAX_DURATION_MS);
    expect(parseDuration(MAX_DURATION_MS / 1000)).toBe(MAX_DURATION_MS);
  });
});

describe('local time in a contact\'s zone', () => {
  it('knows real IANA zones and refuses anything else', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    for (const bad of ['Mars/Olympus', '', 'x'.repeat(65), 42, null, undefined]) expect(isTimeZone(bad)).toBe(false);
  });

  it('a wall-clock time on an ordinary day is that time at the zone\'s offset, east and west', () => {
    expect(zonedMoment({ year: 2026, month: 1, day: 15, hour: 9, minute: 0 }, 'Europe/Paris')).toEqual(new Date('2026-01-15T08:00:00Z'));
    expect(zonedMoment({ year: 2026, month: 7, day: 15, hour: 9, minute: 0 }, 'Europe/Paris')).toEqual(new Date('2026-07-15T07:00:00Z'));
    expect(zonedMoment({ year: 2026, month: 7, day: 15, hour: 9, minute: 0 }, 'America/New_York')).toEqual(new Date('2026-07-15T13:00:00Z'));
    expect(zonedMoment({ year: 2026, month: 7, day: 15, hour: 9, minute: 0 }, 'Asia/Kolkata')).toEqual(new Date('2026-07-15T03:30:00Z'));
  });

  it('a time skipped by spring-forward comes out the jump\'s length later, east and west of Greenwich', () => {
    // Paris jumps 02:00 → 03:00 on 29 March 2026; New York 02:00 → 03:00 on 8 March 2026.
    expect(zonedMoment({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, 'Europe/Paris')).toEqual(new Date('2026-03-29T01:30:00Z'));
    expect(zonedMoment({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, 'America/New_York')).toEqual(new Date('2026-03-08T07:30:00Z'));
    // Lord Howe jumps half an hour, 02:00 → 02:30 on 4 October 2026: 02:15 is 02:45 (UTC+11).
    expect(zonedMoment({ year: 2026, month: 10, day: 4, hour: 2, minute: 15 }, 'Australia/Lord_Howe')).toEqual(new Date('2026-10-03T15:45:00Z'));
  });

  it('a time repeated by fall-back is its later occurrence, east and west of Greenwich', () => {
    // Paris: 02:30 is 00:30Z (summer) and 01:30Z (winter) on 25 October 2026.
    expect(zonedMoment({ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, 'Europe/Paris')).toEqual(new Date('2026-10-25T01:30:00Z'));
    // New York: 01:30 is 05:30Z (EDT) and 06:30Z (EST) on 1 November 2026.
    expect(zonedMoment({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, 'America/New_York')).toEqual(new Date('2026-11-01T06:30:00Z'));
  });

  it('the next local time is today\'s when still ahead (or now), else tomorrow\'s, across month ends', () => {
    expect(nextLocalTime(new Date('2026-01-15T06:00:00Z'), 'Europe/Paris', '08:00')).toEqual(new Date('2026-01-15T07:00:00Z'));
    expect(nextLocalTime(new Date('2026-01-15T07:00:00Z'), 'Europe/Paris', '08:00')).toEqual(new Date('2026-01-15T07:00:00Z'));
    expect(nextLocalTime(new Date('2026-01-15T07:00:01Z'), 'Europe/Paris', '08:00')).toEqual(new Date('2026-01-16T07:00:00Z'));
    expect(nextLocalTime(new Date('2026-01-31T23:30:00Z'), 'UTC', '00:00')).toEqual(new Date('2026-02-01T00:00:00Z'));
    expect(nextLocalTime(new Date('2026-12-31T20:00:00Z'), 'Asia/Tokyo', '09:00')).toEqual(new Date('2027-01-01T00:00:00Z'));
  });

  it('the next local time on daylight-saving days keeps the wall clock, not 24 hours', () => {
    // 09:00 Paris the day before spring-forward is 08:00Z; the day of it, 07:00Z: 23 hours later.
    expect(nextLocalTime(new Date('2026-03-28T08:00:01Z'), 'Europe/Paris', '09:00')).toEqual(new Date('2026-03-29T07:00:00Z'));
    expect(nextLocalTime(new Date('2026-10-24T07:00:01Z'), 'Europe/Paris', '09:00')).toEqual(new Date('2026-10-25T08:00:00Z'));
    // A time in the gap is never before the wanted one: 02:30 New York on 8 March is 03:30 EDT.
    expect(nextLocalTime(new Date('2026-03-08T06:00:00Z'), 'America/New_York', '02:30')).toEqual(new Date('2026-03-08T07:30:00Z'));
  });

  it('minutes since local midnight follow the zone', () => {
    expect(minutesOf('00:00')).toBe(0);
    expect(minutesOf('23:59')).toBe(1_439);
    expect(localMinutes(new Date('2026-07-15T22:30:00Z'), 'Europe/Paris')).toBe(30);
    expect(localMinutes(new Date('2026-07-15T22:30:00Z'), 'America/Los_Angeles')).toBe(15 * 60 + 30);
  });
});

describe('the delivery window', () => {
  const settings = (over: Partial<JourneySettings>): JourneySettings => ({ ...DEFAULT_JOURNEY_SETTINGS, ...over });
  const sends = (channel: RecentSend['channel'], ...moments: string[]): RecentSend[] => moments.map((moment) => ({ channel, at: new Date(moment) }));

  it('the contact\'s zone comes from its attribute when valid, else the workspace\'s', () => {
    const own = settings({ timezone: 'Europe/Paris', timezoneAttribute: 'tz' });
    expect(contactTimeZone(own, { tz: 'Asia/Tokyo' })).toBe('Asia/Tokyo');
    expect(contactTimeZone(own, { tz: 'Nowhere/Else' })).toBe('Europe/Paris');
    expect(contactTimeZone(own, { timezone: 'Asia/Tokyo' })).toBe('Europe/Paris');
    expect(contactTimeZone(own, { tz: 9 })).toBe('Europe/Paris');
  });

  it('quiet hours within a day, over midnight, and of zero length', () => {
    const day = { start: '12:00', end: '14:00' };
    const night = { start: '21:00', end: '08:00' };
    const utc = (time: string) => new Date(`2026-01-15T${time}:00Z`);
    expect([inQuietHours(utc('11:59'), 'UTC', day), inQuietHours(utc('12:00'), 'UTC', day), inQuietHours(utc('14:00'), 'UTC', day)]).toEqual([false, true, false]);
    expect([inQuietHours(utc('20:59'), 'UTC', night), inQuietHours(utc('21:00'), 'UTC', night), inQuietHours(utc('00:00'), 'UTC', night), inQuietHours(utc('07:59'), 'UTC', night), inQuietHours(utc('08:00'), 'UTC', night)])
      .toEqual([false, true, true, true, false]);
    expect(inQuietHours(utc('10:00'), 'UTC', { start: '10:00', end: '10:00' })).toBe(false);
    // 22:30Z is 07:30 in Tokyo (quiet) and 23:30 in Paris (quiet) but 17:30 in New York (not).
    expect(['Asia/Tokyo', 'Europe/Paris', 'America/New_York'].map((zone) => inQuietHours(new Date('2026-01-15T22:30:00Z'), zone, night))).toEqual([true, true, false]);
  });

  it('quiet hours over midnight move a send to the morning in the contact\'s zone, the same night or the next morning', () => {
    const quiet = settings({ quietHours: { start: '21:00', end: '08:00' } });
    expect(nextAllowedMoment(new Date('2026-01-15T22:00:00Z'), 'email', quiet, 'Europe/Paris', [])).toEqual({ at: new Date('2026-01-16T07:00:00Z'), reason: 'quiet_hours' });
    expect(nextAllowedMoment(new Date('2026-01-16T05:00:00Z'), 'email', quiet, 'Europe/Paris', [])).toEqual({ at: new Date('2026-01-16T07:00:00Z'), reason: 'quiet_hours' });
    expect(nextAllowedMoment(new Date('2026-01-16T12:00:00Z'), 'email', quiet, 'Europe/Paris', [])).toBeNull();
    // The night Paris springs forward, 08:00 is 06:00Z, not 07:00Z.
    expect(nextAllowedMoment(new Date('2026-03-28T22:00:00Z'), 'email', quiet, 'Europe/Paris', [])?.at).toEqual(new Date('2026-03-29T06:00:00Z'));
  });

  it('quiet hours ending inside a spring-forward gap release after the jump, never inside the quiet hours', () => {
    const quiet = settings({ quietHours: { start: '00:00', end: '02:30' } });
    const released = nextAllowedMoment(new Date('2026-03-08T06:00:00Z'), 'email', quiet, 'America/New_York', []);
    expect(released).toEqual({ at: new Date('2026-03-08T07:30:00Z'), reason: 'quiet_hours' });
    expect(inQuietHours(released?.at as Date, 'America/New_York', { start: '00:00', end: '02:30' })).toBe(false);
  });

  it('a cap holds a message until enough counted sends leave its window; other channels and old sends do not count', () => {
    const now = new Date('2026-01-15T12:00:00Z');
    const caps: FrequencyCap[] = [{ channel: 'email', limit: 2, windowMs: DAY }];
    expect(capRelease(now, 'email', caps, sends('email', '2026-01-15T00:00:00Z'))).toBeNull();
    expect(capRelease(now, 'email', caps, sends('email', '2026-01-15T00:00:00Z', '2026-01-15T06:00:00Z'))).toEqual(new Date('2026-01-16T00:00:00Z'));
    // Three in the window against a limit of two: two must leave, so the second oldest decides.
    expect(capRelease(now, 'email', caps, sends('email', '2026-01-15T06:00:00Z', '2026-01-15T00:00:00Z', '2026-01-15T09:00:00Z'))).toEqual(new Date('2026-01-16T06:00:00Z'));
    expect(capRelease(now, 'whatsapp', caps, sends('email', '2026-01-15T00:00:00Z', '2026-01-15T06:00:00Z'))).toBeNull();
    expect(capRelease(now, 'email', caps, sends('whatsapp', '2026-01-15T00:00:00Z', '2026-01-15T06:00:00Z'))).toBeNull();
    expect(capRelease(now, 'email', caps, sends('email', '2026-01-14T11:00:00Z', '2026-01-15T06:00:00Z'))).toBeNull();
  });

  it('several caps: the tightest release wins, and an `any` cap counts every channel', () => {
    const now = new Date('2026-01-15T12:00:00Z');
    const caps: FrequencyCap[] = [
      { channel: 'email', limit: 1, windowMs: HOUR },
      { channel: 'any', limit: 3, windowMs: 7 * DAY },
    ];
    const recent = [...sends('email', '2026-01-15T11:30:00Z'), ...sends('whatsapp', '2026-01-10T00:00:00Z', '2026-01-12T00:00:00Z')];
    // The hourly email cap frees at 12:30; the weekly cap of three (two WhatsApp, one email) at 17 January.
    expect(capRelease(now, 'email', caps, recent)).toEqual(new Date('2026-01-17T00:00:00Z'));
    expect(capRelease(now, 'telegram', caps, recent)).toEqual(new Date('2026-01-17T00:00:00Z'));
    expect(capRelease(now, 'email', caps.slice(0, 1), recent)).toEqual(new Date('2026-01-15T12:30:00Z'));
  });

  it('a cap of zero holds nothing back rather than forever', () => {
    expect(capRelease(new Date('2026-01-15T12:00:00Z'), 'email', [{ channel: 'email', limit: 0, windowMs: DAY }], [])).toBeNull();
  });

  it('a cap released inside quiet hours waits for their end, and the first rule that held the message is named', () => {
    const both = settings({ quietHours: { start: '21:00', end: '08:00' }, frequencyCaps: [{ channel: 'email', limit: 1, windowMs: 12 * HOUR }] });
    // 18:00Z: the cap frees at 23:00Z (quiet in UTC), so the message goes at 08:00Z the next day.
    expect(nextAllowedMoment(new Date('2026-01-15T18:00:00Z'), 'email', both, 'UTC', sends('email', '2026-01-15T11:00:00Z')))
      .toEqual({ at: new Date('2026-01-16T08:00:00Z'), reason: 'frequency_cap' });
    // 22:00Z: quiet first; at 08:00 the cap (a send at 21:30Z the night before) still holds until 09:30.
    expect(nextAllowedMoment(new Date('2026-01-15T22:00:00Z'), 'email', both, 'UTC', sends('email', '2026-01-15T21:30:00Z')))
      .toEqual({ at: new Date('2026-01-16T09:30:00Z'), reason: 'quiet_hours' });
    expect(nextAllowedMoment(new Date('2026-01-15T18:00:00Z'), 'email', both, 'UTC', [])).toBeNull();
  });
});

describe('journey graph checks', () => {
  const message = (id: string, next: string | null, over: Record<string, unknown> = {}) => ({ id, type: 'message', preferredChannel: 'email', templateByChannel: { email: T1 }, next, ...over });
  const graphOf = (nodes: unknown[], entry = 'a'): GraphInput => GraphSchema.parse({ entry, nodes });
  const paths = (graph: GraphInput) => graphIssues(graph).map((issue) => issue.path);

  it('a straight journey with a wait_for_event and a branch passes and normalizes its durations', () => {
    const graph = graphOf([
      message('a', 'w'),
      { id: 'w', type: 'wait', duration: 'P2D', next: 'e' },
      { id: 'e', type: 'wait_for_event', event: 'clicked', timeout: 3600, onEvent: 'b', onTimeout: null },
      { id: 'b', type: 'branch', condition: { operator: 'and', rules: [] }, then: 'x', else: null },
      { id: 'x', type: 'exit' },
    ]);
    expect(graphIssues(graph)).toEqual([]);
    const checked = checkedGraph(graph);
    expect(checked.nodes[1]).toEqual({ id: 'w', type: 'wait', durationMs: 2 * DAY, next: 'e' });
    expect(checked.nodes[2]).toMatchObject({ timeoutMs: HOUR, match: {} });
    expect(listenedEvents(checked, { event: 'bought', match: {} }).sort()).toEqual(['bought', 'clicked']);
    expect(templateIdsOf(checked)).toEqual([{ nodeIndex: 0, channel: 'email', templateId: T1 }]);
  });

  it('a next, entry or branch target that is not a node is named by its field', () => {
    expect(paths(graphOf([message('a', 'ghost')]))).toEqual(['graph.nodes[0].next']);
    expect(paths(graphOf([message('a', null)], 'nope'))).toEqual(['graph.entry']);
    expect(paths(graphOf([{ id: 'a', type: 'branch', condition: { operator: 'and', rules: [] }, then: null, else: 'zz' }]))).toEqual(['graph.nodes[0].else']);
  });

  it('a cycle is named at the edge that closes it, a self-loop too', () => {
    expect(graphIssues(graphOf([message('a', 'b'), message('b', 'a')]))).toEqual([{ path: 'graph.nodes[1].next', message: 'Node "b": next "a" closes a cycle' }]);
    expect(paths(graphOf([{ id: 'a', type: 'wait', duration: 60, next: 'a' }]))).toEqual(['graph.nodes[0].next']);
    // Two paths meeting again (a diamond) are no cycle.
    expect(paths(graphOf([
      { id: 'a', type: 'branch', condition: { operator: 'and', rules: [] }, then: 'b', else: 'c' },
      message('b', 'd'), message('c', 'd'), { id: 'd', type: 'exit' },
    ]))).toEqual([]);
  });

  it('a node the entry cannot reach is named', () => {
    expect(graphIssues(graphOf([message('a', null), message('island', null)]))).toEqual([
      { path: 'graph.nodes[1]', message: 'Node "island" cannot be reached from the entry "a"' },
    ]);
  });

  it('duplicate ids, waits without or with too many moments, bad durations and missing templates are named per node', () => {
    expect(paths(graphOf([message('a', null), message('a', null)]))).toEqual(['graph.nodes[1].id']);
    expect(paths(graphOf([{ id: 'a', type: 'wait', next: null }]))).toEqual(['graph.nodes[0].duration']);
    expect(paths(graphOf([{ id: 'a', type: 'wait', until: '2026-01-01T00:00:00Z', duration: 'P1D', next: null }]))).toEqual(['graph.nodes[0].until']);
    expect(paths(graphOf([{ id: 'a', type: 'wait', duration: 'P1Y', next: null }]))).toEqual(['graph.nodes[0].duration']);
    expect(paths(graphOf([{ id: 'a', type: 'wait', atLocalTime: '09:00', next: null }]))).toEqual([]);
    expect(paths(graphOf([{ id: 'a', type: 'wait_for_event', event: 'x', timeout: 'PT0S', onEvent: null, onTimeout: null }]))).toEqual(['graph.nodes[0].timeout']);
    expect(paths(graphOf([message('a', null, { fallbackChain: ['whatsapp'] })]))).toEqual(['graph.nodes[0].templateByChannel.whatsapp']);
    expect(paths(graphOf([message('a', null, { fallbackChain: ['email'] })]))).toEqual(['graph.nodes[0].fallbackChain']);
    expect(paths(graphOf([message('a', null, { fallbackChain: ['telegram'], templateByChannel: { email: T1, telegram: T2 } })]))).toEqual([]);
  });

  it('a contentSid is for a message that may go out on WhatsApp, and contentVariables need one; a WhatsApp step without it is warned about', () => {
    const sid = `HX${'0'.repeat(32)}`;
    const onWhatsApp = { preferredChannel: 'whatsapp', templateByChannel: { whatsapp: T1 } };
    expect(paths(graphOf([message('a', null, { ...onWhatsApp, contentSid: sid, contentVariables: { 1: 'Ann' } })]))).toEqual([]);
    expect(paths(graphOf([message('a', null, { contentSid: sid })]))).toEqual(['graph.nodes[0].contentSid']);
    expect(paths(graphOf([message('a', null, { ...onWhatsApp, contentVariables: { 1: 'Ann' } })]))).toEqual(['graph.nodes[0].contentVariables']);
    expect(GraphSchema.safeParse({ entry: 'a', nodes: [message('a', null, { ...onWhatsApp, contentSid: 'HXnope' })] }).success).toBe(false);
    expect(paths(graphOf([message('a', null, { ...onWhatsApp, contentSid: sid, contentVariables: { 1: '{{ contact.firstName | nosuchfilter }}', 2: '{{ contact.plan }}' } })]))).toEqual([
      'graph.nodes[0].contentVariables.1',
    ]);
    const warned = (node: Record<string, unknown>) => whatsAppWindowWarnings(graphOf([message('a', null, node)])).map((issue) => issue.path);
    expect(warned(onWhatsApp)).toEqual(['graph.nodes[0].contentSid']);
    expect(warned({ fallbackChain: ['whatsapp'], templateByChannel: { email: T1, whatsapp: T2 } })).toEqual(['graph.nodes[0].contentSid']);
    expect(warned({ ...onWhatsApp, contentSid: sid })).toEqual([]);
    expect(warned({})).toEqual([]);
  });

  it('checkedGraph answers 422 validation_error with each bad node\'s path as a field', () => {
    let thrown: unknown;
    try {
      checkedGraph(graphOf([message('a', 'b'), message('b', 'a')]));
    } catch (error) {
      thrown = error;
    }
    expect(isAppError(thrown) && thrown.code).toBe('validation_error');
    expect(isAppError(thrown) && thrown.details).toEqual({ issues: { formErrors: [], fieldErrors: { 'graph.nodes[1].next': ['Node "b": next "a" closes a cycle'] } } });
  });

  it('the schema refuses bad node ids, local times and unknown fields', () => {
    expect(GraphSchema.safeParse({ entry: 'a b', nodes: [message('a b', null)] }).success).toBe(false);
    expect(GraphSchema.safeParse({ entry: 'a', nodes: [{ id: 'a', type: 'wait', atLocalTime: '24:00', next: null }] }).success).toBe(false);
    expect(GraphSchema.safeParse({ entry: 'a', nodes: [{ ...message('a', null), extra: 1 }] }).success).toBe(false);
    expect(GraphSchema.safeParse({ entry: 'a', nodes: [] }).success).toBe(false);
  });

  it('events match on name and the exact text of each matched property', () => {
    const want = { event: 'purchase', match: { plan: 'pro', qty: '2', gift: 'true' } };
    expect(matchesEvent(want, { name: 'purchase', properties: { plan: 'pro', qty: 2, gift: true, other: 'x' } })).toBe(true);
    expect(matchesEvent(want, { name: 'purchase', properties: { plan: 'pro', qty: '2' } })).toBe(false);
    expect(matchesEvent(want, { name: 'purchase', properties: { plan: 'Pro', qty: 2, gift: true } })).toBe(false);
    expect(matchesEvent(want, { name: 'refund', properties: { plan: 'pro', qty: 2, gift: true } })).toBe(false);
    expect(matchesEvent({ event: 'x', match: { o: '[object Object]' } }, { name: 'x', properties: { o: {} } })).toBe(false);
  });

  it('an event is matched against a version where it is stored: the goal, and every wait_for_event node it would end', () => {
    const graph: JourneyGraph = {
      entry: 'paid',
      nodes: [
        { id: 'paid', type: 'wait_for_event', event: 'purchase', match: { plan: 'pro' }, timeoutMs: 1, onEvent: 'any', onTimeout: null },
        { id: 'any', type: 'wait_for_event', event: 'purchase', match: {}, timeoutMs: 1, onEvent: 'other', onTimeout: null },
        { id: 'other', type: 'wait_for_event', event: 'refund', match: {}, timeoutMs: 1, onEvent: null, onTimeout: null },
      ],
    };
    const goal = { event: 'purchase', match: { plan: 'pro' } };
    expect(matchedInVersion({ goal, graph }, { name: 'purchase', properties: { plan: 'pro' } })).toEqual({ goal: true, nodeIds: ['paid', 'any'] });
    expect(matchedInVersion({ goal, graph }, { name: 'purchase', properties: { plan: 'free' } })).toEqual({ goal: false, nodeIds: ['any'] });
    expect(matchedInVersion({ goal: null, graph }, { name: 'signup', properties: {} })).toEqual({ goal: false, nodeIds: [] });
  });

  it('a node is labelled by its label, a message by its subject, else by its type in words', () => {
    expect(nodeLabelOf({ id: 'a', type: 'exit', label: 'Done' })).toBe('Done');
    expect(nodeLabelOf({ id: 'a', type: 'wait_for_event', event: 'x', match: {}, timeoutMs: 1, onEvent: null, onTimeout: null })).toBe('wait for event');
    expect(nodeLabelOf({ id: 'a', type: 'message', preferredChannel: 'email', fallbackChain: [], templateByChannel: {}, attachmentIds: [], next: null }, 'Welcome!')).toBe('Welcome!');
  });
});
