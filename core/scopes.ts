/** Scopes a key may hold. The spec's list plus `keys:write` (decisions: key management over HTTP). */
export const SCOPES = [
  'email:send',
  'inbox:send',
  'messages:send',
  'domains:write',
  'contacts:read',
  'contacts:write',
  'events:write',
  'automations:read',
  'automations:write',
  'templates:read',
  'templates:write',
  'campaigns:read',
  'campaigns:write',
  'inbox:read',
  'inbox:write',
  'webhooks:read',
  'webhooks:write',
  'utm:read',
  'integrations:write',
  'keys:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Stored in place of a scope list for a full-access key, so it also gains scopes added later. */
export const FULL_ACCESS = '*';

export type Grant = Scope | typeof FULL_ACCESS;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Whether a key's grants satisfy a required scope. A `:write` scope also grants the matching `:read`
 * (decisions), and `*` grants everything.
 */
export function grants(held: readonly Grant[], needed: Scope): boolean {
  if (held.includes(FULL_ACCESS) || held.includes(needed)) return true;
  if (needed.endsWith(':read')) {
    const write = needed.replace(/:read$/, ':write');
    return held.includes(write as Scope);
  }
  return false;
}

/** A route may accept any one of several scopes (the spec's `a|b`). */
export function grantsAny(held: readonly Grant[], needed: readonly Scope[]): boolean {
  return needed.some((scope) => grants(held, scope));
}

/** A key may only hand out what it holds itself, so a narrow key cannot mint a broader one. */
export function canDelegate(held: readonly Grant[], requested: readonly Grant[]): boolean {
  if (held.includes(FULL_ACCESS)) return true;
  return requested.every((grant) => grant !== FULL_ACCESS && grants(held, grant));
}
