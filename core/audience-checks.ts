import {
  type AttributeCondition,
  type AttributeOperator,
  type AudienceRules,
  type Rule,
  rulesError,
} from './audience-rules';
import { canonicalDate, type FieldDefinition, type FieldType } from './custom-fields';

/** What the checks know of the workspace: its typed fields and which referenced tags and lists exist. */
export interface AudienceContext {
  fields: ReadonlyMap<string, FieldDefinition>;
  tagIds: ReadonlySet<string>;
  listIds: ReadonlySet<string>;
}

type Issue = { path: Array<string | number>; message: string };

/** Operators that make sense for each field type; `untyped` is an attribute no custom field describes. */
const OPERATORS: Record<FieldType | 'untyped', readonly AttributeOperator[]> = {
  text: ['eq', 'neq', 'contains', 'not_contains', 'in', 'not_in', 'exists', 'not_exists'],
  select: ['eq', 'neq', 'in', 'not_in', 'exists', 'not_exists'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'not_in', 'exists', 'not_exists'],
  boolean: ['eq', 'neq', 'exists', 'not_exists'],
  date: ['before', 'after', 'between', 'within_last', 'exists', 'not_exists'],
  multiselect: ['contains', 'not_contains', 'in', 'not_in', 'exists', 'not_exists'],
  untyped: ['eq', 'neq', 'contains', 'not_contains', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'not_in', 'exists', 'not_exists'],
};

export function operatorsFor(field: FieldDefinition | undefined): readonly AttributeOperator[] {
  return OPERATORS[field?.type ?? 'untyped'];
}

/** The tag and list ids a tree refers to, so the caller can look up which of them exist. */
export function referencedIds(rules: AudienceRules): { tagIds: string[]; listIds: string[] } {
  const tagIds = new Set<string>();
  const listIds = new Set<string>();
  const walk = (node: Rule) => {
    if (node.type === 'group') node.rules.forEach(walk);
    else if (node.type === 'tag') tagIds.add(node.tagId);
    else if (node.type === 'list') listIds.add(node.listId);
  };
  walk(rules);
  return { tagIds: [...tagIds], listIds: [...listIds] };
}

function valueIssues(rule: AttributeCondition, field: FieldDefinition | undefined): Issue[] {
  const type = field?.type ?? 'untyped';
  const values = Array.isArray(rule.value) ? rule.value : rule.value === undefined ? [] : [rule.value];
  const wrong = (message: string): Issue[] => [{ path: ['value'], message }];
  const options = field?.options ?? [];
  switch (type) {
    case 'text':
      return values.every((value) => typeof value === 'string') ? [] : wrong('Expected text values (custom field of type text)');
    case 'select':
    case 'multiselect':
      return values.every((value) => typeof value === 'string' && options.includes(value))
        ? []
        : wrong(`Expected options of the ${type} field: ${options.join(', ')}`);
    case 'boolean':
      return values.every((value) => typeof value === 'boolean') ? [] : wrong('Expected true or false (custom field of type boolean)');
    case 'number':
      if (!values.every((value) => typeof value === 'number')) return wrong('Expected numbers (custom field of type number)');
      return rule.operator === 'between' && (values[0] as number) > (values[1] as number) ? wrong('between needs from <= to') : [];
    case 'date': {
      if (rule.operator !== 'between') return [];
      const dates = values.map((value) => (typeof value === 'string' ? canonicalDate(value) : null));
      if (dates.some((date) => date === null)) return wrong('Expected [from, to] as ISO 8601 dates or date-times');
      return (dates[0] as string) > (dates[1] as string) ? wrong('between needs from <= to') : [];
    }
    case 'untyped':
      if (rule.operator !== 'between') return [];
      if (!values.every((value) => typeof value === 'number')) {
        return wrong('between on an attribute without a custom field compares numbers; define a date field to compare dates');
      }
      return (values[0] as number) > (values[1] as number) ? wrong('between needs from <= to') : [];
  }
}

function conditionIssues(node: Exclude<Rule, { type: 'group' }>, context: AudienceContext): Issue[] {
  switch (node.type) {
    case 'attribute': {
      const field = context.fields.get(node.key);
      const allowed = operatorsFor(field);
      if (!allowed.includes(node.operator)) {
        const what = field ? `a ${field.type} field` : 'an attribute without a custom field (date operators need a date field)';
        return [{ path: ['operator'], message: `${node.operator} does not apply to ${what}; use one of: ${allowed.join(', ')}` }];
      }
      return valueIssues(node, field);
    }
    case 'tag':
      return context.tagIds.has(node.tagId) ? [] : [{ path: ['tagId'], message: 'No tag with this id in the workspace' }];
    case 'list':
      return context.listIds.has(node.listId) ? [] : [{ path: ['listId'], message: 'No list with this id in the workspace' }];
    case 'created': {
      if (node.operator !== 'between' || !Array.isArray(node.value)) return [];
      const [from, to] = node.value.map((value) => canonicalDate(value) as string);
      return from > to ? [{ path: ['value'], message: 'between needs from <= to' }] : [];
    }
    case 'engagement':
    case 'identity':
    case 'event':
      return [];
  }
}

/** Checks of a parsed tree against the workspace; paths are relative to the tree's root. */
export function audienceIssues(rules: AudienceRules, context: AudienceContext): Issue[] {
  const issues: Issue[] = [];
  const walk = (nodes: readonly Rule[], at: Array<string | number>) => {
    nodes.forEach((node, index) => {
      const path = [...at, index];
      if (node.type === 'group') walk(node.rules, [...path, 'rules']);
      else for (const issue of conditionIssues(node, context)) issues.push({ path: [...path, ...issue.path], message: issue.message });
    });
  };
  walk(rules.rules, ['rules']);
  return issues;
}

/** Throws the 422 naming every bad node (`definition.rules[1].operator`). */
export function assertAudienceRules(rules: AudienceRules, context: AudienceContext, prefix = 'definition'): void {
  const issues = audienceIssues(rules, context);
  if (issues.length) throw rulesError(prefix, issues);
}
