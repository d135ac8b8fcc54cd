import type {
  AttributeCondition,
  AudienceRules,
  CreatedCondition,
  EngagementCondition,
  EventCondition,
  IdentityCondition,
  Rule,
} from '../core/audience-rules';
import { canonicalDate, type FieldDefinition } from '../core/custom-fields';
import type { BindParams } from './bind-params';

/**
 * Compiles a checked rule tree (core/audience-checks.ts) into one SQL condition over `contacts c`, so a
 * segment is counted, sampled, listed or snapshotted by a single query. Pure: it only writes SQL text
 * and parameters.
 *
 * Shapes chosen for the planner:
 * - attribute equality is jsonb containment (`c.attributes @> '{"k": v}'`), which the GIN index on
 *   attributes serves for every key; ranges compare `c.attributes -> 'k'`, which an expression index
 *   `(workspace_id, (attributes -> 'k'))` serves once an operator adds one for a hot key (the key is a
 *   parameter, and Postgres plans each execution with its values, so such an index matches);
 * - tags, lists, identities and events are EXISTS subqueries: under AND they become semi- or anti-joins,
 *   under OR hashed subplans;
 * - every condition is true or false, never null, so a negation is the exact complement.
 */
export interface AudienceQueryContext {
  fields: ReadonlyMap<string, FieldDefinition>;
  /** The moment "within the last N days" is counted back from. */
  now: Date;
}

const DAY_MS = 86_400_000;

export function audienceCondition(rules: AudienceRules, context: AudienceQueryContext, params: BindParams, workspace: string): string {
  const compile = (node: Rule): string => {
    switch (node.type) {
      case 'group': {
        if (node.rules.length === 0) return node.operator === 'and' ? 'TRUE' : 'FALSE';
        return `(${node.rules.map(compile).join(node.operator === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'attribute':
        return attributeCondition(node, context, params);
      case 'identity':
        return identityCondition(node, params, workspace);
      case 'tag': {
        const exists = `EXISTS (SELECT 1 FROM contact_tags t WHERE t.tag_id = ${params.add(node.tagId, 'uuid')} AND t.contact_id = c.id)`;
        return node.operator === 'has' ? exists : `NOT ${exists}`;
      }
      case 'list': {
        const exists = `EXISTS (SELECT 1 FROM list_members m WHERE m.list_id = ${params.add(node.listId, 'uuid')} AND m.contact_id = c.id)`;
        return node.operator === 'member' ? exists : `NOT ${exists}`;
      }
      case 'created':
        return createdCondition(node, context, params);
      case 'event':
        return eventCondition(node, context, params, workspace);
      case 'engagement':
        return engagementCondition(node, context, params, workspace);
    }
  };
  return compile(rules);
}

function attributeCondition(rule: AttributeCondition, context: AudienceQueryContext, params: BindParams): string {
  const field = context.fields.get(rule.key);
  const type = field?.type;
  const key = () => params.add(rule.key, 'text');
  const value = (kind: string) => {
    const k = key();
    return { path: `(c.attributes -> ${k})`, typed: `jsonb_typeof(c.attributes -> ${k}) = '${kind}'`, text: `(c.attributes ->> ${k})` };
  };
  const values = Array.isArray(rule.value) ? rule.value : [rule.value];
  const negate = (positive: string) => `(${positive}) IS NOT TRUE`;

  const contains = (): string => {
    if (type === 'multiselect') return `c.attributes @> ${params.json({ [rule.key]: [rule.value] })}`;
    const v = value('string');
    return `(${v.typed} AND strpos(lower(${v.text}), lower(${params.add(rule.value, 'text')})) > 0)`;
  };
  const within = (from: unknown, to: unknown): string => {
    if (type === 'date') {
      const v = value('string');
      return `(${v.typed} AND ${v.text} COLLATE "C" >= ${params.add(from, 'text')} AND ${v.text} COLLATE "C" <= ${params.add(to, 'text')})`;
    }
    // jsonb orders by type first (object > array > boolean > number > string > null, an empty array
    // lowest), so every value between two numbers is a number: no type test, and an index range scan.
    const k = key();
    return `((c.attributes -> ${k}) >= ${params.json(from)} AND (c.attributes -> ${k}) <= ${params.json(to)})`;
  };
  const anyOf = (): string => {
    if (type === 'multiselect') {
      const v = value('array');
      return `(${v.typed} AND ${v.path} ?| ${params.add(values.map(String), 'text[]')})`;
    }
    // One containment per value rather than = ANY(...): each can use the GIN index and is well estimated.
    return `(${values.map((item) => `c.attributes @> ${params.json({ [rule.key]: item })}`).join(' OR ')})`;
  };
  const compare = (op: string): string => {
    if (type === 'date') {
      const v = value('string');
      return `(${v.typed} AND ${v.text} COLLATE "C" ${op} ${params.add(canonicalDate(String(rule.value)), 'text')})`;
    }
    // Above a number only numbers, then booleans, arrays and objects: `< false` bounds the numbers, so
    // gt/gte stay one index range. Below a number lie strings and null, which only a type test excludes.
    const v = value('number');
    if (op === '>' || op === '>=') return `(${v.path} ${op} ${params.json(rule.value)} AND ${v.path} < 'false'::jsonb)`;
    return `(${v.typed} AND ${v.path} ${op} ${params.json(rule.value)})`;
  };

  switch (rule.operator) {
    case 'eq':
      return `c.attributes @> ${params.json({ [rule.key]: rule.value })}`;
    case 'neq':
      return `NOT (c.attributes @> ${params.json({ [rule.key]: rule.value })})`;
    case 'contains':
      return contains();
    case 'not_contains':
      return negate(contains());
    case 'gt':
      return compare('>');
    case 'gte':
      return compare('>=');
    case 'lt':
      return compare('<');
    case 'lte':
      return compare('<=');
    case 'before':
      return compare('<');
    case 'after':
      return compare('>');
    case 'between':
      return type === 'date'
        ? within(canonicalDate(String(values[0])), canonicalDate(String(values[1])))
        : within(values[0], values[1]);
    case 'within_last':
      return within(new Date(context.now.getTime() - (rule.days ?? 0) * DAY_MS).toISOString(), context.now.toISOString());
    case 'in':
      return anyOf();
    case 'not_in':
      return negate(anyOf());
    case 'exists':
      return `c.attributes ? ${key()}`;
    case 'not_exists':
      return `NOT (c.attributes ? ${key()})`;
  }
}

function identityCondition(rule: IdentityCondition, params: BindParams, workspace: string): string {
  const filters = [`i.workspace_id = ${workspace}`, 'i.contact_id = c.id', `i.channel = ${params.add(rule.channel, 'text')}`];
  if (rule.consent !== undefined) filters.push(`i.consent = ${params.add(rule.consent, 'text')}`);
  if (rule.verified !== undefined) filters.push(`i.verified = ${params.add(rule.verified, 'boolean')}`);
  if (rule.isPrimary !== undefined) filters.push(`i.is_primary = ${params.add(rule.isPrimary, 'boolean')}`);
  const exists = `EXISTS (SELECT 1 FROM contact_identities i WHERE ${filters.join(' AND ')})`;
  return rule.operator === 'has' ? exists : `NOT ${exists}`;
}

function createdCondition(rule: CreatedCondition, context: AudienceQueryContext, params: BindParams): string {
  const at = (value: unknown) => params.add(canonicalDate(String(value)), 'timestamptz');
  switch (rule.operator) {
    case 'before':
      return `c.created_at < ${at(rule.value)}`;
    case 'after':
      return `c.created_at > ${at(rule.value)}`;
    case 'between': {
      const [from, to] = rule.value as [string, string];
      return `(c.created_at >= ${at(from)} AND c.created_at <= ${at(to)})`;
    }
    case 'within_last':
      return `c.created_at >= ${params.add(new Date(context.now.getTime() - (rule.days ?? 0) * DAY_MS).toISOString(), 'timestamptz')}`;
  }
}

/**
 * "Performed E at least N times" and "at most N times". Once (at least 1) and never (at most 0) are plain
 * (NOT) EXISTS. Other counts group the window's events of that name by contact first, so the grouped
 * set is computed once and joined, rather than counted again for every contact.
 */
function eventCondition(rule: EventCondition, context: AudienceQueryContext, params: BindParams, workspace: string): string {
  const filters = [`e.workspace_id = ${workspace}`, `e.name = ${params.add(rule.name, 'text')}`];
  if (rule.withinDays !== undefined) {
    filters.push(`e.occurred_at >= ${params.add(new Date(context.now.getTime() - rule.withinDays * DAY_MS).toISOString(), 'timestamptz')}`);
  }
  if (rule.properties && Object.keys(rule.properties).length) filters.push(`e.properties @> ${params.json(rule.properties)}`);
  const where = filters.join(' AND ');
  if ((rule.operator === 'at_least' && rule.count === 1) || (rule.operator === 'at_most' && rule.count === 0)) {
    const exists = `EXISTS (SELECT 1 FROM contact_events e WHERE ${where} AND e.contact_id = c.id)`;
    return rule.operator === 'at_least' ? exists : `NOT ${exists}`;
  }
  const threshold = rule.operator === 'at_least' ? `>= ${params.add(rule.count, 'bigint')}` : `> ${params.add(rule.count, 'bigint')}`;
  const exists =
    `EXISTS (SELECT 1 FROM (SELECT e.contact_id FROM contact_events e WHERE ${where} ` +
    `GROUP BY e.contact_id HAVING count(*) ${threshold}) counted WHERE counted.contact_id = c.id)`;
  return rule.operator === 'at_least' ? exists : `NOT ${exists}`;
}

/** The stored event type each engagement action counts. */
const ENGAGEMENT_EVENT = { opened: 'open', clicked: 'click' } as const;

/**
 * "Opened (clicked) at least / at most N times": the contact's human open (click) events, over the
 * messages addressed to the contact (`messages.contact_id`), optionally of one campaign and within the
 * last N days. Machine opens, prefetches and bot clicks never count (decisions.md, "Engagement
 * classification"), as in MessageEngagement. Shaped like the event condition: once and never are (NOT)
 * EXISTS, other counts a grouped set joined once.
 */
function engagementCondition(rule: EngagementCondition, context: AudienceQueryContext, params: BindParams, workspace: string): string {
  // Everyone engaged at least 0 times. Answered before any parameter is bound: PostgreSQL refuses a
  // statement with a parameter it never reads (it cannot infer its type).
  if (rule.operator === 'at_least' && rule.count === 0) return 'TRUE';
  const filters = [`m.workspace_id = ${workspace}`, `e.type = ${params.add(ENGAGEMENT_EVENT[rule.action], 'text')}`, `e.classification = 'human'`];
  if (rule.withinDays !== undefined) {
    filters.push(`e.created_at >= ${params.add(new Date(context.now.getTime() - rule.withinDays * DAY_MS).toISOString(), 'timestamptz')}`);
  }
  if (rule.campaignId !== undefined) filters.push(`m.campaign_id = ${params.add(rule.campaignId, 'uuid')}`);
  const from = `messages m JOIN message_events e ON e.message_id = m.id WHERE ${filters.join(' AND ')}`;
  if ((rule.operator === 'at_least' && rule.count === 1) || (rule.operator === 'at_most' && rule.count === 0)) {
    const exists = `EXISTS (SELECT 1 FROM ${from} AND m.contact_id = c.id)`;
    return rule.operator === 'at_least' ? exists : `NOT ${exists}`;
  }
  const threshold = rule.operator === 'at_least' ? `>= ${params.add(rule.count, 'bigint')}` : `> ${params.add(rule.count, 'bigint')}`;
  const exists =
    `EXISTS (SELECT 1 FROM (SELECT m.contact_id FROM ${from} AND m.contact_id IS NOT NULL ` +
    `GROUP BY m.contact_id HAVING count(*) ${threshold}) counted WHERE counted.contact_id = c.id)`;
  return rule.operator === 'at_least' ? exists : `NOT ${exists}`;
}

/**
 * The count of a tree that is a single "has tag" or "member of list" (possibly inside single-rule
 * groups), read from the membership's primary key alone, an index-only scan: counting it through
 * contacts would read every contact of the workspace to find the members. Exact because memberships
 * reference contacts of their own workspace by foreign key, and the tag or list was checked to be the
 * workspace's. Null for any other tree.
 */
export function soleMembershipCount(rules: AudienceRules, params: BindParams): string | null {
  let node: Rule = rules;
  while (node.type === 'group' && node.rules.length === 1) node = node.rules[0];
  if (node.type === 'tag' && node.operator === 'has') {
    return `SELECT count(*) AS count FROM contact_tags WHERE tag_id = ${params.add(node.tagId, 'uuid')}`;
  }
  if (node.type === 'list' && node.operator === 'member') {
    return `SELECT count(*) AS count FROM list_members WHERE list_id = ${params.add(node.listId, 'uuid')}`;
  }
  return null;
}
