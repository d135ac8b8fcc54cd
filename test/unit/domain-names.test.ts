import { normaliseDomainName, organisationalDomain } from '../../core/domain-names';

const problem = (input: string) => {
  const result = normaliseDomainName(input);
  return result.ok ? null : result.problem;
};

describe('domain names', () => {
  it('a registrable domain or a subdomain is kept as lower-case A-labels without the trailing dot', () => {
    expect(normaliseDomainName('Example.COM')).toEqual({ ok: true, name: 'example.com' });
    expect(normaliseDomainName(' mail.example.co.uk. ')).toEqual({ ok: true, name: 'mail.example.co.uk' });
    expect(normaliseDomainName('Bücher.de')).toEqual({ ok: true, name: 'xn--bcher-kva.de' });
    expect(normaliseDomainName('xn--bcher-kva.de')).toEqual({ ok: true, name: 'xn--bcher-kva.de' });
  });

  it('IP addresses are refused, including forms the URL parser reads as IPv4', () => {
    for (const input of ['192.0.2.1', '2001:db8::1', '[2001:db8::1]', '0x7f.1']) {
      expect(problem(input)).toMatch(/IP address/);
    }
  });

  it('a label over 63 characters and a name over 253 characters are refused with their lengths', () => {
    expect(problem(`${'a'.repeat(64)}.com`)).toBe(`The label ${'a'.repeat(64)} is 64 characters long; a label may have at most 63`);
    expect(normaliseDomainName(`${'a'.repeat(63)}.com`).ok).toBe(true);
    const long = `${Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.')}.com`;
    expect(long.length).toBe(255);
    expect(problem(long)).toBe('The domain name is 255 characters long; at most 253 are allowed');
  });

  it('characters outside letters, digits and inner hyphens are refused', () => {
    expect(problem('ex_ample.com')).toMatch(/only letters, digits and inner hyphens/);
    expect(problem('-example.com')).toMatch(/only letters, digits and inner hyphens/);
    expect(problem('exa mple.com')).toMatch(/not allowed/);
    expect(problem('example.com:25')).toMatch(/not allowed/);
    expect(problem('user@example.com')).toMatch(/not allowed/);
    expect(problem('a..example.com')).toMatch(/empty label/);
    expect(problem('')).toBe('A domain name is required');
  });

  it('a public suffix, a single label and names under suffixes nobody registers are refused', () => {
    expect(problem('co.uk')).toMatch(/public suffix/);
    expect(problem('com')).toMatch(/public suffix/);
    expect(problem('localhost')).toMatch(/not under a public domain suffix/);
    expect(problem('printer.local')).toMatch(/not under a public domain suffix/);
    expect(problem('example.invalidtld')).toMatch(/not under a public domain suffix/);
  });

  it('the organisational domain is the registrable part of a name', () => {
    expect(organisationalDomain('mail.example.co.uk')).toBe('example.co.uk');
    expect(organisationalDomain('example.com')).toBe('example.com');
  });
});
