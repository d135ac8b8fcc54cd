import type { AttributeCondition, AudienceRules, EventCondition, Rule } from '../audience-rules';
import type { Channel } from '../identities';
import type { SimulatedEvent } from './simulation';

/**
 * AudienceRules evaluated in memory for a synthetic contact of a simulation, which has no row to run the
 * segment SQL against: attributes, identities (the addresses given, taken as verified, opted-in and
 * primary) and events (the ones given, up to the moment of the branch). Tags, lists, creation time and
 * engagement belong to stored contacts: such a condition is taken as false and named in `unevaluated`.
 */

export interface SyntheticContact {
  attributes: Record<string, unknown>;
  /** The channels it has an address on. */
  channels: ReadonlySet<Channel>;
  events: readonly SimulatedEvent[];
}

const DAY_MS = 86_400_000;

function asNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

function asTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

/** Scalars compare as their text, as `c.attributes @> {k: v}` does for a string given for a string. */
const same = (a: unknown, b: unknown) => a === b || (asNumber(a) !== null && asNumber(a) === asNumber(b) && typeof a === typeof b);

function attributeMatches(rule: AttributeCondition, attributes: Record<string, unknown>, now: Date): boolean {
  const actual = attributes[rule.key];
  const values = Array.isArray(actual) ? actual : [actual];
  const present = actual !== undefined && actual !== null;
  const operand = rule.value;
  switch (rule.operator) {
    case 'exists':
      return present;
    case 'not_exists':
      return !present;
    case 'eq':
      return present && values.some((value) => same(value, operand));
    case 'neq':
      return !present || !values.some((value) => same(value, operand));
    case 'contains':
    case 'not_contains': {
      const needle = String(operand).toLowerCase();
      const holds = present && values.some((value) => (Array.isArray(actual) ? String(value).toLowerCase() === needle : String(value).toLowerCase().includes(needle)));
      return rule.operator === 'contains' ? holds : !holds;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const number = asNumber(actual);
      const bound = operand as number;
      if (number === null) return false;
      return { gt: number > bound, gte: number >= bound, lt: number < bound, lte: number <= bound }[rule.operator];
    }
    case 'between': {
      const [from, to] = operand as unknown[];
      const number = asNumber(actual);
      if (number !== null && asNumber(from) !== null) return number >= (asNumber(from) as number) && number <= (asNumber(to) as number);
      const time = asTime(actual);
      return time !== null && asTime(from) !== null && time >= (asTime(from) as number) && time <= (asTime(to) as number);
    }
    case 'in':
    case 'not_in': {
      const holds = present && values.some((value) => (operand as unknown[]).some((option) => same(value, option)));
      return rule.operator === 'in' ? holds : !holds;
    }
    case 'before':
    case 'after': {
      const time = asTime(actual);
      const bound = asTime(operand);
      if (time === null || bound === null) return false;
      return rule.operator === 'before' ? time < bound : time > bound;
    }
    case 'within_last': {
      const time = asTime(actual);
      return time !== null && time <= now.getTime() && time >= now.getTime() - (rule.days ?? 0) * DAY_MS;
    }
  }
}

function eventCount(rule: EventCondition, events: readonly SimulatedEvent[], now: Date): number {
  const since = rule.withinDays === undefined ? -Infinity : now.getTime() - rule.withinDays * DAY_MS;
  return events.filter(
    (event) =>
      event.name === rule.name &&
      event.at.getTime() <= now.getTime() &&
      event.at.getTime() > since &&
      Object.entries(rule.properties ?? {}).every(([key, value]) => event.properties[key] === value),
  ).length;
}

/** Whether the synthetic contact matches at `now`, and which conditions were taken as false unevaluated. */
export function matchSynthetic(rules: AudienceRules, contact: SyntheticContact, now: Date): { matches: boolean; unevaluated: string[] } {
  const unevaluated: string[] = [];
  const evaluate = (rule: Rule): boolean => {
    switch (rule.type) {
      case 'group':
        return rule.operator === 'and' ? rule.rules.map(evaluate).every(Boolean) : rule.rules.map(evaluate).some(Boolean);
      case 'attribute':
        return attributeMatches(rule, contact.attributes, now);
      case 'identity': {
        // A synthetic address is taken as verified, opted in and primary.
        const fits = contact.channels.has(rule.channel) && (rule.consent ?? 'opted_in') === 'opted_in' && rule.verified !== false && rule.isPrimary !== false;
        return rule.operator === 'has' ? fits : !fits;
      }
      case 'event': {
        const count = eventCount(rule, contact.events, now);
        return rule.operator === 'at_least' ? count >= rule.count : count <= rule.count;
      }
      case 'tag':
      case 'list':
      case 'created':
      case 'engagement':
        unevaluated.push(`${rule.type} condition (${rule.type} ${rule.operator})`);
        return false;
    }
  };
  return { matches: evaluate(rules), unevaluated };
}
