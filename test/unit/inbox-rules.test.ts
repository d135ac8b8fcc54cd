import { decideSender, matchesRule, normalizeRuleValue, type EmailRule } from '../../core/inbox/rules';

const allow = (matchType: EmailRule['matchType'], value: string): EmailRule => ({ action: 'allow', matchType, value });
const block = (matchType: EmailRule['matchType'], value: string): EmailRule => ({ action: 'block', matchType, value });

describe('matchesRule', () => {
  it('an address rule matches that address in any case, and nothing else', () => {
    expect(matchesRule(allow('address', 'bob@example.com'), 'Bob@Example.COM')).toBe(true);
    expect(matchesRule(allow('address', 'bob@example.com'), 'bobby@example.com')).toBe(false);
  });

  it('a domain rule matches the domain and its subdomains, not lookalikes', () => {
    const rule = block('domain', 'example.com');
    expect(matchesRule(rule, 'a@example.com')).toBe(true);
    expect(matchesRule(rule, 'a@mail.EXAMPLE.com')).toBe(true);
    expect(matchesRule(rule, 'a@notexample.com')).toBe(false);
    expect(matchesRule(rule, 'a@example.com.evil.test')).toBe(false);
    expect(matchesRule(rule, 'example.com')).toBe(false);
  });
});

describe('decideSender', () => {
  it('no rules accepts everyone, the null sender included', () => {
    expect(decideSender([], ['a@example.com'])).toEqual({ accepted: true });
    expect(decideSender([], [null])).toEqual({ accepted: true });
  });

  it('a block match refuses as blocked, naming the rule', () => {
    const rule = block('address', 'spam@example.com');
    expect(decideSender([rule], ['spam@example.com'])).toEqual({ accepted: false, reason: 'blocked', rule });
    expect(decideSender([rule], ['ham@example.com'])).toEqual({ accepted: true });
  });

  it('with any allow rule, only matching senders pass', () => {
    const rules = [allow('domain', 'partner.example')];
    expect(decideSender(rules, ['a@partner.example'])).toEqual({ accepted: true });
    expect(decideSender(rules, ['a@other.example'])).toEqual({ accepted: false, reason: 'not_allowed', rule: null });
  });

  it('block wins over allow: a blocked address inside an allowed domain is refused', () => {
    const rules = [allow('domain', 'partner.example'), block('address', 'intern@partner.example')];
    expect(decideSender(rules, ['intern@partner.example'])).toMatchObject({ accepted: false, reason: 'blocked' });
    expect(decideSender(rules, ['boss@partner.example'])).toEqual({ accepted: true });
  });

  it('the null sender is refused when an allow list exists, and no block rule matches it', () => {
    expect(decideSender([allow('domain', 'partner.example')], [null])).toEqual({ accepted: false, reason: 'not_allowed', rule: null });
    expect(decideSender([block('domain', 'partner.example')], [null])).toEqual({ accepted: true });
  });

  it('an ESP envelope sender with an allowed From is accepted; a blocked From is refused whatever the envelope', () => {
    expect(decideSender([allow('domain', 'partner.example')], ['bounce-1@amazonses.com', 'boss@partner.example'])).toEqual({ accepted: true });
    expect(decideSender([allow('domain', 'partner.example')], ['bounce-1@amazonses.com', 'x@other.example'])).toMatchObject({ accepted: false, reason: 'not_allowed' });
    expect(decideSender([block('address', 'spam@bad.example')], ['bounce-1@amazonses.com', 'spam@bad.example'])).toMatchObject({ accepted: false, reason: 'blocked' });
  });
});

describe('normalizeRuleValue', () => {
  it('lower-cases an address and its domain', () => {
    expect(normalizeRuleValue('address', ' Bob@Example.COM ')).toEqual({ ok: true, value: 'bob@example.com' });
  });

  it('stores a domain without a leading @, as an A-label', () => {
    expect(normalizeRuleValue('domain', '@Example.com')).toEqual({ ok: true, value: 'example.com' });
    expect(normalizeRuleValue('domain', 'bücher.de')).toEqual({ ok: true, value: 'xn--bcher-kva.de' });
  });

  it.each(['bob', '@example.com', 'bob@', 'bob smith@example.com', '<bob@example.com>'])('refuses %j as an address', (value) => {
    expect(normalizeRuleValue('address', value)).toMatchObject({ ok: false });
  });

  it('refuses what is not a domain name', () => {
    expect(normalizeRuleValue('domain', 'bob@example.com')).toMatchObject({ ok: false });
    expect(normalizeRuleValue('domain', '10.0.0.1')).toMatchObject({ ok: false });
    expect(normalizeRuleValue('domain', '')).toMatchObject({ ok: false });
  });

  it('refuses an address whose domain is not a domain name', () => {
    expect(normalizeRuleValue('address', 'bob@localhost')).toMatchObject({ ok: false });
  });
});
