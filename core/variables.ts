import { z } from 'zod';

/**
 * Bounds on template variables (a send's `variables`, a preview's). They are free JSON that the request
 * hash walks, Postgres stores as jsonb and Liquid reads on every render: unbounded, 10,000 levels of
 * nesting overflow the stack of the recursive steps (a 500 instead of an answer), and a body's worth
 * of keys is paid for again at each step.
 */
export const VARIABLE_LIMITS = {
  /** Levels of objects and arrays, the variables object itself being the first. */
  depth: 10,
  /** Object keys and array items, counted over every level. */
  entries: 1_000,
  /** Size as JSON (UTF-8). */
  bytes: 64 * 1024,
};

/**
 * Why these variables are refused, or null. Walks without recursion and stops at the first level or
 * entry over the limit, so a hostile value costs no more than the limits allow.
 */
export function variablesProblem(variables: unknown, limits = VARIABLE_LIMITS): string | null {
  const pending: Array<{ value: unknown; level: number }> = [{ value: variables, level: 1 }];
  let entries = 0;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, level } = next;
    if (value === null || typeof value !== 'object') continue;
    if (level > limits.depth) return `Nested deeper than ${limits.depth} levels`;
    const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
    entries += children.length;
    if (entries > limits.entries) return `More than ${limits.entries} keys and array items in all`;
    for (const child of children) pending.push({ value: child, level: level + 1 });
  }
  // Safe to serialise now: the depth is bounded.
  if (Buffer.byteLength(JSON.stringify(variables)) > limits.bytes) return `Larger than ${limits.bytes / 1024} KB as JSON`;
  return null;
}

/** `variables` of a send or a preview: an object of free values, within VARIABLE_LIMITS. */
export const VariablesSchema = z
  .record(z.string(), z.unknown())
  .superRefine((variables, context) => {
    const problem = variablesProblem(variables);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .describe(`Template variables: at most ${VARIABLE_LIMITS.depth} levels deep, ${VARIABLE_LIMITS.entries} keys and array items, ${VARIABLE_LIMITS.bytes / 1024} KB as JSON`);
