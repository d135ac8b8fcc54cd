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

/** A `:write` scope that has a matching `:read`. */
export type ReadableWriteScope = {
  [S in Scope]: S extends `${infer Area}:write` ? (`${Area}:read` extends Scope ? S : never) : never;
}[Scope];

/**
 * Where the spec's table writes a `:write` scope on a read (GET /tags, /lists, /segments, /custom-fields,
 * /campaigns), the route keeps that literal scope and also accepts the area's `:read`, every such route the
 * same way: a client holding what the table says is never refused, nor is one holding the read scope the
 * rest of the API asks for reads.
 */
export function literalOrRead(scope: ReadableWriteScope): readonly [ReadableWriteScope, Scope] {
  return [scope, scope.replace(/:write$/, ':read') as Scope];
}

/** The `:write` scope of an access list whose `:read` it also lists (literalOrRead), if any. */
export function widenedWrite(scopes: readonly Scope[]): Scope | undefined {
  return scopes.find((scope) => scope.endsWith(':write') && scopes.includes(scope.replace(/:write$/, ':read') as Scope));
}
