import { type DnsLookup, sameHost } from './dns-answers';

/**
 * Judges a domain's SPF record for sending through the platform: it must authorise the platform's include
 * and stay within the 10 DNS lookups receivers allow (RFC 7208 §4.6.4), counted through every include
 * and redirect. Nothing is evaluated against an IP address: the question is whether the published policy
 * lets our servers send, not whether one particular connection passes.
 */
export const SPF_LOOKUP_LIMIT = 10;

export type Qualifier = '+' | '-' | '~' | '?';

export type SpfTerm =
  | { kind: 'mechanism'; qualifier: Qualifier; name: string; value: string | null }
  | { kind: 'modifier'; name: string; value: string };

const MECHANISMS = new Set(['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists']);
/** Mechanisms and modifiers that make the receiver query DNS, and so count against the limit. */
const LOOKUP_TERMS = new Set(['include', 'a', 'mx', 'ptr', 'exists', 'redirect']);
const MODIFIER = /^([a-z][a-z0-9_.-]*)=(.*)$/i;
const MECHANISM = /^([+\-~?]?)([a-z0-9]+)(?:[:/](.*))?$/i;

/** The texts among a name's TXT records that are SPF records (`v=spf1` as the first term, any case). */
export function spfRecordsOf(texts: readonly string[]): string[] {
  return texts.filter((text) => /^v=spf1(\s|$)/i.test(text.trim()));
}

export type ParsedSpf = { ok: true; terms: SpfTerm[] } | { ok: false; problem: string };

export function parseSpf(text: string): ParsedSpf {
  const [version, ...tokens] = text.trim().split(/\s+/);
  if (version.toLowerCase() !== 'v=spf1') return { ok: false, problem: 'it does not start with v=spf1' };
  const terms: SpfTerm[] = [];
  for (const token of tokens) {
    const modifier = MODIFIER.exec(token);
    if (modifier && !MECHANISMS.has(modifier[1].toLowerCase())) {
      terms.push({ kind: 'modifier', name: modifier[1].toLowerCase(), value: modifier[2] });
      continue;
    }
    const mechanism = MECHANISM.exec(token);
    const name = mechanism?.[2].toLowerCase();
    // RFC 7208 §5: a mechanism the receiver does not know is a permanent error for the whole record.
    if (!mechanism || !name || !MECHANISMS.has(name)) return { ok: false, problem: `it contains the unknown term "${token}"` };
    terms.push({ kind: 'mechanism', qualifier: (mechanism[1] || '+') as Qualifier, name, value: mechanism[3] ?? null });
  }
  return { ok: true, terms };
}

export type SpfVerdict =
  | { status: 'verified'; lookups: number }
  | { status: 'failed' | 'unknown'; lookups: number; detail: string };

interface Walk {
  lookups: number;
  includesOurs: boolean;
  /** The include was found, but with a qualifier that does not authorise, or after `all`. */
  misplacedOurs: string | null;
  problem: string | null;
  transient: string | null;
}

/**
 * Walks the SPF policy of `domain`. The platform's own include is followed for the lookup count but never
 * blamed on the customer: whether it resolves is the platform's business.
 */
export async function checkSpf(lookup: DnsLookup, domain: string, platformInclude: string): Promise<SpfVerdict> {
  const walk: Walk = { lookups: 0, includesOurs: false, misplacedOurs: null, problem: null, transient: null };
  const topRecord = await visit(lookup, walk, domain, platformInclude, null);
  const over = walk.lookups > SPF_LOOKUP_LIMIT;
  const lookups = walk.lookups;
  if (walk.transient) return { status: 'unknown', lookups, detail: walk.transient };
  if (walk.problem) return { status: 'failed', lookups, detail: walk.problem };
  if (over) {
    return {
      status: 'failed',
      lookups,
      detail:
        `The SPF record of ${domain} needs more than ${SPF_LOOKUP_LIMIT} DNS lookups (include, a, mx, ptr, exists and ` +
        `redirect count, through every include), so receivers treat it as an error. Remove the includes you no longer ` +
        `use, or replace them with ip4:/ip6: ranges, and keep include:${platformInclude}.`,
    };
  }
  if (!walk.includesOurs) {
    const shown = topRecord ? ` ("${topRecord}")` : '';
    return {
      status: 'failed',
      lookups,
      detail:
        walk.misplacedOurs ??
        `The SPF record of ${domain}${shown} does not include ${platformInclude}; add include:${platformInclude} before ~all.`,
    };
  }
  return { status: 'verified', lookups };
}

/** Visits one SPF record; returns its text when found. `via` names the include or redirect that led here. */
async function visit(lookup: DnsLookup, walk: Walk, domain: string, ours: string, via: string | null): Promise<string | null> {
  const answer = await lookup.txt(domain);
  const isOurs = via !== null && sameHost(domain, ours);
  if (answer.kind === 'error') {
    if (!isOurs) walk.transient ??= `The DNS lookup of the TXT records of ${domain} failed (${answer.reason}); SPF could not be checked. Try again in a few minutes.`;
    return null;
  }
  const records = answer.kind === 'found' ? spfRecordsOf(answer.records) : [];
  if (isOurs) {
    if (records.length === 1) await followTerms(lookup, walk, domain, ours, records[0], true);
    return null;
  }
  if (records.length === 0) {
    walk.problem ??= via
      ? `${via} in the SPF policy names ${domain}, which has no SPF record; receivers treat that as an error. Remove it or fix that domain's SPF record.`
      : `No SPF record found at ${domain}. Publish a TXT record at ${domain} with the value "v=spf1 include:${ours} ~all".`;
    return null;
  }
  if (records.length > 1) {
    walk.problem ??= `${domain} has ${records.length} SPF records; a domain may publish only one (RFC 7208 §3.2). Merge them into one record that contains include:${ours}.`;
    return null;
  }
  await followTerms(lookup, walk, domain, ours, records[0], false);
  return records[0];
}

async function followTerms(lookup: DnsLookup, walk: Walk, domain: string, ours: string, record: string, insideOurs: boolean): Promise<void> {
  const parsed = parseSpf(record);
  if (!parsed.ok) {
    if (!insideOurs) walk.problem ??= `The SPF record of ${domain} is not valid: ${parsed.problem}. Receivers treat it as an error.`;
    return;
  }
  let reachedAll = false;
  for (const term of parsed.terms) {
    if (walk.lookups > SPF_LOOKUP_LIMIT || walk.problem || walk.transient) return;
    if (term.kind === 'mechanism' && term.name === 'include' && term.value && sameHost(term.value, ours) && !insideOurs) {
      if (reachedAll) {
        walk.misplacedOurs ??= `include:${ours} comes after "all" in the SPF record of ${domain}, so receivers never reach it; move it before ~all.`;
        continue;
      }
      if (term.qualifier !== '+') {
        walk.misplacedOurs ??= `The SPF record of ${domain} has ${term.qualifier}include:${ours}, which does not authorise our servers; write include:${ours} without a qualifier.`;
        continue;
      }
      walk.includesOurs = true;
    }
    // RFC 7208 §5.1: mechanisms after "all" are never tested, so they cost no lookups either.
    if (reachedAll) continue;
    if (term.kind === 'mechanism' && term.name === 'all') {
      reachedAll = true;
      continue;
    }
    if (!LOOKUP_TERMS.has(term.name)) continue;
    // §6.1: redirect applies only when the record has no "all".
    if (term.kind === 'modifier' && parsed.terms.some((other) => other.kind === 'mechanism' && other.name === 'all')) continue;
    walk.lookups += 1;
    const target = term.value;
    const follows = term.name === 'include' || term.name === 'redirect';
    // A macro target (%{i}, %{d}...) depends on the connection being judged, so there is nothing to follow.
    if (follows && target && !target.includes('%')) {
      await visit(lookup, walk, target.replace(/\.$/, ''), ours, `${term.name}${term.kind === 'modifier' ? '=' : ':'}${target}`);
    }
  }
}
