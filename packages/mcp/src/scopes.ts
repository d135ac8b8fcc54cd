import type { components } from '@messaging-backend/client';

/** A key's grant as the served document names it: a scope, or `*` for full access. */
export type Grant = components['schemas']['Scope'];
export type Scope = Exclude<Grant, '*'>;

/** Who may call a tool: holders of one of these scopes, or any valid key (get_usage). */
export type ToolAccess = readonly Scope[] | 'any-key';

/**
 * The service's grant rule (core/scopes.ts), repeated here because this package is published without the
 * service: `*` grants everything, and a `:write` scope grants its `:read`. A unit test holds the two equal.
 */
export function holds(grants: readonly Grant[], needed: Scope): boolean {
  if (grants.includes('*') || grants.includes(needed)) return true;
  if (!needed.endsWith(':read')) return false;
  return grants.some((grant) => grant === needed.replace(/:read$/, ':write'));
}

/** Whether a key with these grants may use a tool: it holds one of the tool's scopes (the API's `a|b`). */
export function allows(grants: readonly Grant[], access: ToolAccess): boolean {
  return access === 'any-key' || access.some((scope) => holds(grants, scope));
}
