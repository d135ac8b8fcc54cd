import { addressCandidates, normaliseAddress, normaliseEmail, normalisePhone, normaliseTelegramChatId } from '../../core/identities';

const ok = (address: string) => ({ ok: true, address });

describe('identity addresses', () => {
  it('an email is trimmed and lower-cased as a whole; dots and +tags are kept', () => {
    expect(normaliseEmail('  Ann.Lee+News@Example.COM ')).toEqual(ok('ann.lee+news@example.com'));
  });

  it('an internationalised domain is stored in its ASCII form', () => {
    expect(normaliseEmail('kontakt@Bücher.de')).toEqual(ok('kontakt@xn--bcher-kva.de'));
  });

  it.each([
    ['no at sign', 'ann.example.com'],
    ['nothing before @', '@example.com'],
    ['a display name', 'Ann <ann@example.com>'],
    ['a domain without a dot', 'ann@localhost'],
    ['consecutive dots', 'ann..lee@example.com'],
    ['an empty label', 'ann@example..com'],
    ['a numeric top-level label', 'ann@10.0.0.1'],
    ['a space', 'ann lee@example.com'],
  ])('an email with %s is refused', (_case, input) => {
    expect(normaliseEmail(input).ok).toBe(false);
  });

  it('an over-long local part is refused', () => {
    expect(normaliseEmail(`${'a'.repeat(65)}@example.com`)).toEqual({ ok: false, reason: expect.stringContaining('64') });
  });

  it('a phone number becomes E.164, from spaced, dashed, 00 or whatsapp: forms', () => {
    for (const input of ['+1 415 555 0100', '+1 (415) 555-0100', '0014155550100', 'whatsapp:+14155550100']) {
      expect(normalisePhone(input)).toEqual(ok('+14155550100'));
    }
  });

  it.each([
    ['no country code', '4155550100'],
    ['too few digits', '+33612'],
    ['an extension', '+14155550100 ext. 12'],
    ['letters', '+1 415 CALL NOW'],
  ])('a phone number with %s is refused', (_case, input) => {
    expect(normalisePhone(input).ok).toBe(false);
  });

  it('a Telegram chat id is a canonical integer; groups are negative; usernames are refused', () => {
    expect(normaliseTelegramChatId(' 00123456789 ')).toEqual(ok('123456789'));
    expect(normaliseTelegramChatId('-1001234567890')).toEqual(ok('-1001234567890'));
    expect(normaliseTelegramChatId('@someone').ok).toBe(false);
    expect(normaliseTelegramChatId('0').ok).toBe(false);
  });

  it('each channel has its own rule', () => {
    expect(normaliseAddress('email', 'A@B.co')).toEqual(ok('a@b.co'));
    expect(normaliseAddress('whatsapp', '+442079460000')).toEqual(ok('+442079460000'));
    expect(normaliseAddress('telegram', '42')).toEqual(ok('42'));
  });

  it('an address without a channel is tried on every channel its form fits', () => {
    expect(addressCandidates('Ann@Example.com')).toEqual([{ channel: 'email', address: 'ann@example.com' }]);
    expect(addressCandidates('+14155550100')).toEqual([{ channel: 'whatsapp', address: '+14155550100' }]);
    expect(addressCandidates('123456')).toEqual([{ channel: 'telegram', address: '123456' }]);
    expect(addressCandidates('nothing at all')).toEqual([]);
  });
});
