import { z } from 'zod';
import { canonicalDate } from './custom-fields';
import { AppError } from './errors';
import { CHANNELS, CONSENTS } from './identities';

/**
 * AudienceRules: the rule tree of a segment (and of an automation branch). A tree of and/or groups whose
 * leaves are conditions on one contact. This file is its shape and the checks that need no database;
 * db/segment-query.ts compiles a checked tree to one SQL query.
 */
export const MAX_GROUP_DEPTH = 5;
export const MAX_CONDITIONS = 100;
export const MAX_RULES_PER_GROUP = 50;

const Scalar = z.union([z.string().max(1_000), z.number(), z.boolean()]);
const DateText = z.string().refine((value) => canonicalDate(value) !== null, 'Expected an ISO 8601 date or date-time');
const Days = z.int().min(1).max(36_500);

export const ATTRIBUTE_OPERATORS = [
  'eq', 'neq', 'contains', 'not_contains', 'gt', 'gte', 'lt', 'lte', 'between',
  'in', 'not_in', 'exists', 'not_exists', 'before', 'after', 'within_last',
] as const;
export type AttributeOperator = (typeof ATTRIBUTE_OPERATORS)[number];

type Issue = { path: Array<string | number>; message: string };

/** Which `value`/`days` each operator takes; the same for every attribute, typed or not. */
function attributeShapeIssues(rule: { operator: AttributeOperator; value?: unknown; days?: number }): Issue[] {
  const { operator, value, days } = rule;
  const needs = (message: string): Issue[] => [{ path: ['value'], message }];
  if (operator !== 'within_last' && days !== undefined) return [{ path: ['days'], message: 'Only within_last takes days' }];
  switch (operator) {
    case 'exists':
    case 'not_exists':
      return value === undefined ? [] : needs(`${operator} takes no value`);
    case 'within_last':
      if (value !== undefined) return needs('within_last takes days, not a value');
      return days === undefined ? [{ path: ['days'], message: 'within_last needs days' }] : [];
    case 'eq':
    case 'neq':
      return value === undefined || Array.isArray(value) ? needs(`${operator} needs one string, number or boolean`) : [];
    case 'contains':
    case 'not_contains':
      return typeof value === 'string' ? [] : needs(`${operator} needs a string`);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return typeof value === 'number' ? [] : needs(`${operator} needs a number`);
    case 'between':
      return Array.isArray(value) && value.length === 2 ? [] : needs('between needs [from, to], both included');
    case 'in':
    case 'not_in':
      return Array.isArray(value) && value.every((item) => typeof item !== 'boolean') ? [] : needs(`${operator} needs an array of strings or numbers`);
    case 'before':
    case 'after':
      return typeof value === 'string' && canonicalDate(value) ? [] : needs(`${operator} needs an ISO 8601 date or date-time`);
  }
}

const addIssues = (ctx: z.RefinementCtx, issues: Issue[]) => {
  for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
};

export const AttributeConditionSchema = z
  .strictObject({
    type: z.literal('attribute'),
    key: z.string().min(1).max(100).describe('Attribute key. When a custom field has this key, the condition is typed by it.'),
    operator: z.enum(ATTRIBUTE_OPERATORS).describe(
      'eq/neq: equal or not (neq also matches contacts without the attribute). contains/not_contains: case-insensitive ' +
        'substring of a text value, or, on a multiselect, holds that option. gt/gte/lt/lte: numbers. between: [from, to], ' +
        'both included (numbers, or dates on a date field). in/not_in: equals one of (on a multiselect: holds any of). ' +
        'exists/not_exists: the key is set. before/after/within_last: date fields only.',
    ),
    value: z.union([Scalar, z.array(Scalar).min(1).max(100)]).optional().describe('The operand; its shape depends on the operator'),
    days: Days.optional().describe('within_last: the window in days, ending now'),
  })
  .superRefine((rule, ctx) => addIssues(ctx, attributeShapeIssues(rule)))
  .meta({
    id: 'AttributeCondition',
    description: 'A condition on one attribute of the contact.',
    // Part of attributeShapeIssues, for the document: only within_last takes days (and needs them, not a value);
    // exists and not_exists take no value. The other operators' operand shapes stay in the description.
    allOf: [
      {
        if: { properties: { operator: { const: 'within_last' } } },
        then: { required: ['days'], not: { required: ['value'] } },
        else: { not: { required: ['days'] } },
      },
      { if: { properties: { operator: { enum: ['exists', 'not_exists'] } } }, then: { not: { required: ['value'] } } },
    ],
  });

export const IdentityConditionSchema = z
  .strictObject({
    type: z.literal('identity'),
    operator: z.enum(['has', 'has_not']),
    channel: z.enum(CHANNELS),
    consent: z.enum(CONSENTS).optional().describe('Only identities with this consent count'),
    verified: z.boolean().optional().describe('Only verified (or unverified) identities count'),
    isPrimary: z.boolean().optional().describe('Only the primary identity of the channel counts'),
  })
  .meta({
    id: 'IdentityCondition',
    description: 'Has (or has not) an identity on the channel matching every given property, e.g. an opted-in email.',
  });

export const TagConditionSchema = z
  .strictObject({ type: z.literal('tag'), operator: z.enum(['has', 'has_not']), tagId: z.uuid() })
  .meta({ id: 'TagCondition', description: 'Has (or has not) the tag, which must be one of the workspace\'s (422 otherwise).' });

export const ListConditionSchema = z
  .strictObject({ type: z.literal('list'), operator: z.enum(['member', 'not_member']), listId: z.uuid() })
  .meta({ id: 'ListCondition', description: 'Is (or is not) a member of the static list, which must be one of the workspace\'s (422 otherwise).' });

export const CreatedConditionSchema = z
  .strictObject({
    type: z.literal('created'),
    operator: z.enum(['before', 'after', 'between', 'within_last']),
    value: z.union([DateText, z.tuple([DateText, DateText])]).optional().describe('before/after: a date-time; between: [from, to], both included'),
    days: Days.optional().describe('within_last: the window in days, ending now'),
  })
  .superRefine((rule, ctx) => {
    if (rule.operator === 'within_last') {
      if (rule.days === undefined) addIssues(ctx, [{ path: ['days'], message: 'within_last needs days' }]);
      if (rule.value !== undefined) addIssues(ctx, [{ path: ['value'], message: 'within_last takes days, not a value' }]);
      return;
    }
    if (rule.days !== undefined) addIssues(ctx, [{ path: ['days'], message: 'Only within_last takes days' }]);
    const wantsPair = rule.operator === 'between';
    if (rule.value === undefined || Array.isArray(rule.value) !== wantsPair) {
      addIssues(ctx, [{ path: ['value'], message: wantsPair ? 'between needs [from, to]' : `${rule.operator} needs one date-time` }]);
    }
  })
  .meta({
    id: 'CreatedCondition',
    description: 'When the contact was created.',
    // The superRefine above, for the document: within_last takes days, between a pair, before and after one date-time.
    if: { properties: { operator: { const: 'within_last' } } },
    then: { required: ['days'], not: { required: ['value'] } },
    else: {
      required: ['value'],
      not: { required: ['days'] },
      if: { properties: { operator: { const: 'between' } } },
      then: { properties: { value: { type: 'array', minItems: 2, maxItems: 2 } } },
      else: { properties: { value: { type: 'string' } } },
    },
  });

const EventProperties = z
  .record(z.string().min(1).max(100), Scalar)
  .refine((value) => Object.keys(value).length <= 20, 'At most 20 properties')
  .describe('Only events whose properties have these values count');

export const EventConditionSchema = z
  .strictObject({
    type: z.literal('event'),
    name: z.string().min(1).max(200).describe('Event name, as sent to POST /events'),
    operator: z.enum(['at_least', 'at_most']),
    count: z.int().min(0).max(1_000_000),
    withinDays: Days.optional().describe('Count only events of the last N days; all time when absent'),
    properties: EventProperties.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.operator === 'at_least' && rule.count < 1) {
      addIssues(ctx, [{ path: ['count'], message: 'at_least needs a count of 1 or more (at_least 0 matches everyone)' }]);
    }
  })
  .meta({
    id: 'EventCondition',
    description: 'Performed the event at least (or at most) N times, over all time or within the last N days. at_most 0: never.',
    // at_least 0 would match everyone, so it is refused (the superRefine above).
    if: { properties: { operator: { const: 'at_least' } } },
    then: { properties: { count: { minimum: 1 } } },
  });

export const EngagementConditionSchema = z
  .strictObject({
    type: z.literal('engagement'),
    action: z.enum(['opened', 'clicked']),
    operator: z.enum(['at_least', 'at_most']),
    count: z.int().min(0).max(1_000_000),
    withinDays: Days.optional(),
    campaignId: z.uuid().optional().describe('Only messages of this campaign'),
  })
  .meta({
    id: 'EngagementCondition',
    description:
      'Opened or clicked messages at least (or at most) N times. Only human events count: machine opens, ' +
      'prefetches and bot clicks never do. Counted over the messages sent to the contact (of one campaign with campaignId).',
  });

const conditionSchemas = [
  AttributeConditionSchema,
  IdentityConditionSchema,
  TagConditionSchema,
  ListConditionSchema,
  CreatedConditionSchema,
  EventConditionSchema,
  EngagementConditionSchema,
] as const;

export type AttributeCondition = z.infer<typeof AttributeConditionSchema>;
export type IdentityCondition = z.infer<typeof IdentityConditionSchema>;
export type TagCondition = z.infer<typeof TagConditionSchema>;
export type ListCondition = z.infer<typeof ListConditionSchema>;
export type CreatedCondition = z.infer<typeof CreatedConditionSchema>;
export type EventCondition = z.infer<typeof EventConditionSchema>;
export type EngagementCondition = z.infer<typeof EngagementConditionSchema>;
export type Condition =
  | AttributeCondition
  | IdentityCondition
  | TagCondition
  | ListCondition
  | CreatedCondition
  | EventCondition
  | EngagementCondition;

export interface RuleGroup {
  type: 'group';
  operator: 'and' | 'or';
  rules: Rule[];
}
export type Rule = RuleGroup | Condition;

const groupOperator = z.enum(['and', 'or']).describe('and: every rule matches; or: at least one does');

export const RuleGroupSchema: z.ZodType<RuleGroup> = z
  .strictObject({
    type: z.literal('group'),
    operator: groupOperator,
    get rules() {
      return z.array(RuleSchema).min(1).max(MAX_RULES_PER_GROUP);
    },
  })
  .meta({ id: 'RuleGroup', description: 'A nested group of rules.' });

export const RuleSchema: z.ZodType<Rule> = z.discriminatedUnion('type', [
  RuleGroupSchema as unknown as z.ZodObject<{ type: z.ZodLiteral<'group'> }>,
  ...conditionSchemas,
]) as unknown as z.ZodType<Rule>;

export const AudienceRulesSchema = z
  .strictObject({
    type: z.literal('group').optional().describe('The root is always a group; `type` may be left out'),
    operator: groupOperator,
    rules: z.array(RuleSchema).max(MAX_RULES_PER_GROUP).describe('An empty root matches every contact (and) or none (or)'),
  })
  .superRefine((root, ctx) => addIssues(ctx, sizeIssues(root.rules, ['rules'], 1)))
  .transform((root): RuleGroup => ({ type: 'group', operator: root.operator, rules: root.rules }))
  .meta({
    id: 'AudienceRules',
    description:
      `A rule tree: and/or groups nested at most ${MAX_GROUP_DEPTH} levels deep (the root is level 1), with at most ` +
      `${MAX_CONDITIONS} conditions in all. Conditions: attribute (typed by the custom field of the same key), identity ` +
      '(channel, consent, verified), tag, list, created (time), event (behaviour), engagement (human opens and clicks).',
  });

export type AudienceRules = RuleGroup;

function sizeIssues(rules: readonly Rule[], path: Array<string | number>, depth: number): Issue[] {
  const issues: Issue[] = [];
  let conditions = 0;
  const walk = (nodes: readonly Rule[], at: Array<string | number>, level: number) => {
    nodes.forEach((node, index) => {
      if (node.type !== 'group') {
        conditions += 1;
        return;
      }
      if (level + 1 > MAX_GROUP_DEPTH) {
        issues.push({ path: [...at, index], message: `Groups nest at most ${MAX_GROUP_DEPTH} levels deep` });
        return;
      }
      walk(node.rules, [...at, index, 'rules'], level + 1);
    });
  };
  walk(rules, path, depth);
  if (conditions > MAX_CONDITIONS) issues.push({ path: [], message: `At most ${MAX_CONDITIONS} conditions in a rule tree` });
  return issues;
}

/** `definition.rules[1].rules[0].operator`: the bad node, as a client would reach it in its own JSON. */
export function formatPath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>(
    (text, part) => (typeof part === 'number' ? `${text}[${part}]` : `${text}${text ? '.' : ''}${String(part)}`),
    prefix,
  );
}

export function rulesError(prefix: string, issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): AppError {
  const fieldErrors: Record<string, string[]> = {};
  for (const issue of issues) (fieldErrors[formatPath(prefix, issue.path)] ??= []).push(issue.message);
  return AppError.validation({ formErrors: [], fieldErrors });
}

/**
 * Parses a rule tree, or throws a 422 whose field names are the full paths of the bad nodes. Request
 * schemas use it through z.preprocess: the route table flattens zod errors to top-level fields, which
 * for a tree would only ever say "definition".
 */
export function parseAudienceRules(value: unknown, prefix = 'definition'): AudienceRules {
  const parsed = AudienceRulesSchema.safeParse(value);
  if (!parsed.success) throw rulesError(prefix, parsed.error.issues);
  return parsed.data;
}

/**
 * The rule tree as a request field: documented as AudienceRules, failing with the bad node's path.
 * Anything but an object is left to the schema, whose error then names the field itself (the OpenAPI
 * generator also probes schemas with undefined and null).
 */
export const AudienceRulesInput = z.preprocess(
  (value) => (typeof value === 'object' && value !== null ? parseAudienceRules(value) : value),
  AudienceRulesSchema,
);
