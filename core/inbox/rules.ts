import { normaliseDomainName } from '../domain-names';

/**
 * Allow/block rules of inbound mail (decisions.md): a block match refuses the mail; when any allow rule exists,
 * only senders matching one are accepted. Block wins over allow, so a blocked address inside an allowed domain
 * stays blocked. A `domain` rule matches the domain and its subdomains (`example.com` covers
 * `mail.example.com`), because senders send from subdomains of the organisation they belong to.
 */
export type RuleAction = 'allow' | 'block';
export type RuleMatchType = 'address' | 'domain';

export interface EmailRule {
  action: RuleAction;
  matchType: RuleMatchType;
  /** As stored: lower-case; a domain without `@`. */
  value: string;
}

export type SenderVerdict = { accepted: true } | { accepted: false; reason: 'blocked' | 'not_allowed'; rule: EmailRule | null };

export function matchesRule(rule: EmailRule, sender: string): boolean {
  const address = sender.trim().toLowerCase();
  if (rule.matchType === 'address') return address === rule.value;
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address.slice(at + 1).replace(/\.$/, '');
  return domain === rule.value || domain.endsWith(`.${rule.value}`);
}

/**
 * The verdict on a message's senders: its envelope sender (MAIL FROM) and the address(es) of its From header.
 * A block rule matching any of them refuses the mail. With allow rules, one of them must match an allow rule:
 * mail a partner sends through an ESP has the ESP's bounce address as envelope sender and the partner's address
 * only in From, and the sender the recipient knows is the From. A null sender (`MAIL FROM:<>`, bounces and
 * auto-replies) and an unreadable From match no rule.
 */
export function decideSender(rules: readonly EmailRule[], senders: readonly (string | null)[]): SenderVerdict {
  const known = senders.filter((sender): sender is string => Boolean(sender));
  const blocked = rules.find((rule) => rule.action === 'block' && known.some((sender) => matchesRule(rule, sender)));
  if (blocked) return { accepted: false, reason: 'blocked', rule: blocked };
  const allows = rules.filter((rule) => rule.action === 'allow');
  if (!allows.length) return { accepted: true };
  if (allows.some((rule) => known.some((sender) => matchesRule(rule, sender)))) return { accepted: true };
  return { accepted: false, reason: 'not_allowed', rule: null };
}

export type RuleValueResult = { ok: true; value: string } | { ok: false; problem: string };

/** The stored form of a rule's value, or why it cannot be one (the API answers 422 with it). */
export function normalizeRuleValue(matchType: RuleMatchType, input: string): RuleValueResult {
  const raw = input.trim();
  if (matchType === 'domain') {
    const name = normaliseDomainName(raw.replace(/^@/, ''));
    return name.ok ? { ok: true, value: name.name } : { ok: false, problem: name.problem };
  }
  const at = raw.lastIndexOf('@');
  if (at <= 0 || at === raw.length - 1 || /\s|[<>]/.test(raw)) return { ok: false, problem: 'it is not an email address (local@domain)' };
  const domain = normaliseDomainName(raw.slice(at + 1));
  if (!domain.ok) return { ok: false, problem: domain.problem };
  return { ok: true, value: `${raw.slice(0, at).toLowerCase()}@${domain.name}` };
}
