import type { AttributeCondition, Rule } from '../../core/audience-rules';

/**
 * A brute-force evaluation of AudienceRules over contacts held in memory: the documented semantics
 * written as plain TypeScript, independently of the SQL compiler, so tests can compare the two.
 */
export interface ModelContact {
  id: string;
  createdAt: Date;
  attributes: Record<string, unknown>;
  identities: Array<{ channel: string; address: string; consent: string; verified: boolean; isPrimary: boolean }>;
  tags: Set<string>;
  lists: Set<string>;
  events: Array<{ name: string; occurredAt: Date; properties: Record<string, unknown> }>;
}

export interface ModelField {
  type: 'text' | 'number' | 'boolean' | 'date' | 'select' | 'multiselect';
}

const DAY_MS = 86_400_000;

/** Dates are compared in the canonical stored form: UTC ISO 8601 with milliseconds. */
const canonical = (value: unknown) => {
  const text = String(value);
  return new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00.000Z` : text).toISOString();
};

function attributeMatches(rule: AttributeCondition, contact: ModelContact, fields: Record<string, ModelField>, now: Date): boolean {
  const type = fields[rule.key]?.type;
  const present = Object.hasOwn(contact.attributes, rule.key);
  const value = contact.attributes[rule.key];
  const operands = Array.isArray(rule.value) ? rule.value : [rule.value];
  const equal = () => value === rule.value;
  const contains = () =>
    type === 'multiselect'
      ? Array.isArray(value) && value.includes(rule.value)
      : typeof value === 'string' && value.toLowerCase().includes(String(rule.value).toLowerCase());
  const anyOf = () =>
    type === 'multiselect' ? Array.isArray(value) && operands.some((operand) => value.includes(operand)) : operands.some((operand) => operand === value);
  const number = typeof value === 'number' ? value : null;
  const date = type === 'date' && typeof value === 'string' ? value : null;
  const range = (from: unknown, to: unknown) =>
    type === 'date'
      ? date !== null && date >= canonical(from) && date <= canonical(to)
      : number !== null && number >= (from as number) && number <= (to as number);
  switch (rule.operator) {
    case 'eq':
      return equal();
    case 'neq':
      return !equal();
    case 'contains':
      return contains();
    case 'not_contains':
      return !contains();
    case 'gt':
      return number !== null && number > (rule.value as number);
    case 'gte':
      return number !== null && number >= (rule.value as number);
    case 'lt':
      return number !== null && number < (rule.value as number);
    case 'lte':
      return number !== null && number <= (rule.value as number);
    case 'between':
      return range(operands[0], operands[1]);
    case 'within_last':
      return date !== null && date >= new Date(now.getTime() - (rule.days ?? 0) * DAY_MS).toISOString() && date <= now.toISOString();
    case 'before':
      return date !== null && date < canonical(rule.value);
    case 'after':
      return date !== null && date > canonical(rule.value);
    case 'in':
      return anyOf();
    case 'not_in':
      return !anyOf();
    case 'exists':
      return present;
    case 'not_exists':
      return !present;
  }
}

export function evaluate(rule: Rule, contact: ModelContact, fields: Record<string, ModelField>, now: Date): boolean {
  switch (rule.type) {
    case 'group':
      return rule.operator === 'and'
        ? rule.rules.every((child) => evaluate(child, contact, fields, now))
        : rule.rules.some((child) => evaluate(child, contact, fields, now));
    case 'attribute':
      return attributeMatches(rule, contact, fields, now);
    case 'identity': {
      const found = contact.identities.some(
        (identity) =>
          identity.channel === rule.channel &&
          (rule.consent === undefined || identity.consent === rule.consent) &&
          (rule.verified === undefined || identity.verified === rule.verified) &&
          (rule.isPrimary === undefined || identity.isPrimary === rule.isPrimary),
      );
      return rule.operator === 'has' ? found : !found;
    }
    case 'tag':
      return rule.operator === 'has' ? contact.tags.has(rule.tagId) : !contact.tags.has(rule.tagId);
    case 'list':
      return rule.operator === 'member' ? contact.lists.has(rule.listId) : !contact.lists.has(rule.listId);
    case 'created': {
      const at = contact.createdAt.getTime();
      if (rule.operator === 'within_last') return at >= now.getTime() - (rule.days ?? 0) * DAY_MS;
      const [from, to] = (Array.isArray(rule.value) ? rule.value : [rule.value, rule.value]).map((value) => new Date(String(value)).getTime());
      if (rule.operator === 'before') return at < from;
      if (rule.operator === 'after') return at > from;
      return at >= from && at <= to;
    }
    case 'event': {
      const since = rule.withinDays === undefined ? -Infinity : now.getTime() - rule.withinDays * DAY_MS;
      const count = contact.events.filter(
        (event) =>
          event.name === rule.name &&
          event.occurredAt.getTime() >= since &&
          Object.entries(rule.properties ?? {}).every(([key, value]) => event.properties[key] === value),
      ).length;
      return rule.operator === 'at_least' ? count >= rule.count : count <= rule.count;
    }
    case 'engagement':
      throw new Error('engagement conditions are not evaluated');
  }
}

/** A small seeded generator (mulberry32), so a failing run can be reproduced. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
