/**
 * What an import's `mapping` may say about a column (decisions.md "Imports"): an identity (`email`, `phone`
 * as a WhatsApp number, `telegram` as a chat id), one attribute (`attribute:<key>`), a JSON object of
 * attributes (`attributes`, listmonk's column), tags (`tag`: comma-separated names), a list membership
 * (`list:<name>`: a truthy cell adds the contact to that list), lists by name (`lists`: comma-separated, as
 * GET /contacts/export writes them), a listmonk `status` (`listmonk:status`), or
 * nothing (`ignore`, to drop a column a provider's preset maps).
 */
export type ImportTarget =
  | { kind: 'identity'; channel: 'email' | 'whatsapp' | 'telegram' }
  | { kind: 'attribute'; key: string }
  | { kind: 'attributes' }
  | { kind: 'tag' }
  | { kind: 'list'; name: string }
  | { kind: 'lists' }
  | { kind: 'status' }
  | { kind: 'ignore' };

export const IMPORT_PHASES = ['queued', 'downloading', 'counting', 'importing', 'completed', 'failed', 'canceled'] as const;
export type ImportPhase = (typeof IMPORT_PHASES)[number];
export const TERMINAL_PHASES: readonly ImportPhase[] = ['completed', 'failed', 'canceled'];

/** The spec's ImportJob status, derived from the phase. */
export type ImportStatus = 'pending' | 'running' | 'completed' | 'failed' | 'canceled';

export function importStatusOf(phase: ImportPhase): ImportStatus {
  if (phase === 'queued') return 'pending';
  if (phase === 'completed' || phase === 'failed' || phase === 'canceled') return phase;
  return 'running';
}

const ATTRIBUTE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const MAX_NAME = 100;

export type ParsedTarget = { ok: true; target: ImportTarget } | { ok: false; reason: string };

export function parseTarget(raw: string): ParsedTarget {
  switch (raw) {
    case 'email':
      return { ok: true, target: { kind: 'identity', channel: 'email' } };
    case 'phone':
      return { ok: true, target: { kind: 'identity', channel: 'whatsapp' } };
    case 'telegram':
      return { ok: true, target: { kind: 'identity', channel: 'telegram' } };
    case 'tag':
      return { ok: true, target: { kind: 'tag' } };
    case 'lists':
      return { ok: true, target: { kind: 'lists' } };
    case 'attributes':
      return { ok: true, target: { kind: 'attributes' } };
    case 'listmonk:status':
      return { ok: true, target: { kind: 'status' } };
    case 'ignore':
      return { ok: true, target: { kind: 'ignore' } };
  }
  if (raw.startsWith('attribute:')) {
    const key = raw.slice('attribute:'.length);
    return ATTRIBUTE_KEY.test(key)
      ? { ok: true, target: { kind: 'attribute', key } }
      : { ok: false, reason: 'attribute:<key> needs a key of letters, digits, _ . - (up to 64, not starting with a digit)' };
  }
  if (raw.startsWith('list:')) {
    const name = raw.slice('list:'.length).trim();
    return name && name.length <= MAX_NAME
      ? { ok: true, target: { kind: 'list', name } }
      : { ok: false, reason: `list:<name> needs a name of 1 to ${MAX_NAME} characters` };
  }
  return { ok: false, reason: 'Expected email, phone, telegram, attribute:<key>, attributes, tag, list:<name>, lists, listmonk:status or ignore' };
}

/** A column mapping checked: targets by column name, or the problems by column name. */
export type CheckedMapping =
  | { ok: true; targets: Map<string, ImportTarget> }
  | { ok: false; problems: Record<string, string> };

export function checkMapping(mapping: Readonly<Record<string, string>>): CheckedMapping {
  const targets = new Map<string, ImportTarget>();
  const problems: Record<string, string> = {};
  for (const [column, raw] of Object.entries(mapping)) {
    const parsed = parseTarget(raw);
    if (parsed.ok) targets.set(column, parsed.target);
    else problems[column] = parsed.reason;
  }
  if (Object.keys(problems).length) return { ok: false, problems };
  const identities = [...targets.values()].filter((target) => target.kind === 'identity');
  if (identities.length === 0) return { ok: false, problems: { '': 'Map at least one column to email, phone or telegram' } };
  return { ok: true, targets };
}

/** What an import writes, for the ImportJob's `entities`. */
export function importEntities(targets: ReadonlyMap<string, ImportTarget>, options: { tags?: readonly string[]; lists?: readonly string[] }): Record<string, boolean> {
  const kinds = new Set([...targets.values()].map((target) => target.kind));
  return {
    contacts: true,
    attributes: kinds.has('attribute') || kinds.has('attributes'),
    tags: kinds.has('tag') || Boolean(options.tags?.length),
    lists: kinds.has('list') || kinds.has('lists') || Boolean(options.lists?.length),
    suppressions: kinds.has('status'),
  };
}
