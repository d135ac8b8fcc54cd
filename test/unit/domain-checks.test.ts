import { checkDkim, checkDmarc, checkDomainRecords, checkMx, parseTags } from '../../core/domain-checks';
import { nextDomainStatus, statusEvent } from '../../core/domain-status';
import { memoryDns } from '../helpers/memory-dns';

const settings = { spfInclude: 'spf.messaging.local', inboundMxHost: 'inbound.messaging.local' };
const KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtest';
const domain = { name: 'example.com', dkimSelector: 'msgsel00001', dkimPublicKey: KEY, inboundEnabled: false };
const DKIM_NAME = 'msgsel00001._domainkey.example.com';
const published = {
  'example.com': ['v=spf1 include:spf.messaging.local ~all'],
  [DKIM_NAME]: [`v=DKIM1; k=rsa; p=${KEY}`],
  '_dmarc.example.com': ['v=DMARC1; p=none; rua=mailto:dmarc@example.com'],
};

describe('DKIM check', () => {
  it('passes when the record carries our public key, even split by whitespace', async () => {
    const { lookup } = memoryDns({ txt: { [DKIM_NAME]: [`v=DKIM1; k=rsa; p=${KEY.slice(0, 20)} ${KEY.slice(20)}`] } });
    expect(await checkDkim(lookup, domain)).toEqual({ record: 'dkim', status: 'verified' });
  });

  it('fails with a different key and says to replace the value', async () => {
    const { lookup } = memoryDns({ txt: { [DKIM_NAME]: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAother'] } });
    expect(await checkDkim(lookup, domain)).toEqual({
      record: 'dkim',
      status: 'failed',
      detail: `The DKIM record at ${DKIM_NAME} carries a different public key than the one generated for example.com. Replace its value with the DKIM value listed in dnsRecords.`,
    });
  });

  it('fails when missing, revoked (empty p=), of another key type, or published twice', async () => {
    const missing = memoryDns({ txt: {} });
    expect((await checkDkim(missing.lookup, domain)).detail).toMatch(new RegExp(`^No DKIM record found at ${DKIM_NAME}\\. Publish a TXT record`));
    const revoked = memoryDns({ txt: { [DKIM_NAME]: ['v=DKIM1; k=rsa; p='] } });
    expect((await checkDkim(revoked.lookup, domain)).detail).toMatch(/empty public key \(p=\), which means the key is revoked/);
    const ed25519 = memoryDns({ txt: { [DKIM_NAME]: [`v=DKIM1; k=ed25519; p=${KEY}`] } });
    expect((await checkDkim(ed25519.lookup, domain)).detail).toMatch(/has k=ed25519; .* must be k=rsa/);
    const twice = memoryDns({ txt: { [DKIM_NAME]: [`v=DKIM1; p=${KEY}`, `v=DKIM1; p=${KEY}`] } });
    expect((await checkDkim(twice.lookup, domain)).detail).toBe(`${DKIM_NAME} has 2 DKIM records; keep only the one listed in dnsRecords.`);
  });
});

describe('DMARC check', () => {
  it('passes with a record that has a policy', async () => {
    const { lookup } = memoryDns({ txt: { '_dmarc.example.com': ['v=DMARC1; p=reject'] } });
    expect(await checkDmarc(lookup, 'example.com')).toEqual({ record: 'dmarc', status: 'verified' });
  });

  it('fails when missing, giving the record to publish', async () => {
    const { lookup } = memoryDns({ txt: { '_dmarc.example.com': ['not dmarc'] } });
    expect(await checkDmarc(lookup, 'example.com')).toEqual({
      record: 'dmarc',
      status: 'failed',
      detail: 'No DMARC record found at _dmarc.example.com. Publish a TXT record at _dmarc.example.com with the value "v=DMARC1; p=none; adkim=r; aspf=r".',
    });
  });

  it('fails without p= or with a policy that does not exist', async () => {
    const noPolicy = memoryDns({ txt: { '_dmarc.example.com': ['v=DMARC1; rua=mailto:x@example.com'] } });
    expect((await checkDmarc(noPolicy.lookup, 'example.com')).detail).toBe(
      'The DMARC record at _dmarc.example.com has no policy; add p=none (or p=quarantine, p=reject) after v=DMARC1.',
    );
    const badPolicy = memoryDns({ txt: { '_dmarc.example.com': ['v=DMARC1; p=block'] } });
    expect((await checkDmarc(badPolicy.lookup, 'example.com')).detail).toMatch(/has p=block; the policy must be none, quarantine or reject/);
  });

  it('a subdomain without its own record is covered by the organisational domain\'s record', async () => {
    const { lookup, queries } = memoryDns({ txt: { '_dmarc.example.com': ['v=DMARC1; p=quarantine'] } });
    expect(await checkDmarc(lookup, 'mail.example.com')).toEqual({ record: 'dmarc', status: 'verified' });
    expect(queries).toEqual(['TXT _dmarc.mail.example.com', 'TXT _dmarc.example.com']);
  });
});

describe('MX check', () => {
  it('passes when our host is the preferred exchange, fails when another host is preferred or ours is absent', async () => {
    const ours = memoryDns({ mx: { 'example.com': [{ exchange: 'inbound.messaging.local', priority: 10 }, { exchange: 'backup.example.com', priority: 20 }] } });
    expect(await checkMx(ours.lookup, 'example.com', 'inbound.messaging.local')).toEqual({ record: 'mx', status: 'verified' });
    const preferred = memoryDns({ mx: { 'example.com': [{ exchange: 'inbound.messaging.local', priority: 20 }, { exchange: 'mx.other.example', priority: 5 }] } });
    expect((await checkMx(preferred.lookup, 'example.com', 'inbound.messaging.local')).detail).toMatch(/prefer mx\.other\.example \(priority 5\) over inbound\.messaging\.local/);
    const absent = memoryDns({});
    expect((await checkMx(absent.lookup, 'example.com', 'inbound.messaging.local')).detail).toBe(
      'The MX records of example.com do not point to inbound.messaging.local. Publish an MX record at example.com with priority 10 and the host inbound.messaging.local.',
    );
  });
});

describe('the whole domain', () => {
  it('is verified when SPF, DKIM and DMARC all check, with no detail', async () => {
    const { lookup } = memoryDns({
      txt: { ...published, 'bounces.example.com': ['v=spf1 include:spf.messaging.local ~all'] },
      mx: { 'bounces.example.com': [{ exchange: 'inbound.messaging.local', priority: 10 }] },
    });
    expect(await checkDomainRecords(lookup, domain, settings)).toEqual({
      outcome: 'verified',
      records: [
        { record: 'spf', status: 'verified' },
        { record: 'dkim', status: 'verified' },
        { record: 'dmarc', status: 'verified' },
        { record: 'return_path_mx', status: 'verified' },
        { record: 'return_path_spf', status: 'verified' },
      ],
    });
  });

  it('the bounce return path unpublished fails its own records only: the domain still verifies, with no detail', async () => {
    const { lookup } = memoryDns({ txt: published });
    const check = await checkDomainRecords(lookup, domain, settings);
    expect(check.outcome).toBe('verified');
    expect(check.detail).toBeUndefined();
    expect(check.records.slice(3)).toEqual([
      expect.objectContaining({ record: 'return_path_mx', status: 'failed' }),
      expect.objectContaining({ record: 'return_path_spf', status: 'failed' }),
    ]);
    expect(check.records.slice(3).map((record) => record.detail).join(' ')).toContain('bounces.example.com');
  });

  it('fails when one record fails, and the detail names every problem in record order', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 mx ~all'], [DKIM_NAME]: published[DKIM_NAME] } });
    const check = await checkDomainRecords(lookup, domain, settings);
    expect(check.outcome).toBe('failed');
    expect(check.records.map((record) => record.status)).toEqual(['failed', 'verified', 'failed', 'failed', 'failed']);
    expect(check.detail).toMatch(/^The SPF record of example\.com .* No DMARC record found at _dmarc\.example\.com\./);
  });

  it('is inconclusive when DNS does not answer, so nothing can be concluded', async () => {
    const { lookup } = memoryDns({ txt: published, failing: ['_dmarc.example.com'] });
    const check = await checkDomainRecords(lookup, domain, settings);
    expect(check.outcome).toBe('inconclusive');
    expect(check.detail).toMatch(/The DNS lookup of _dmarc\.example\.com failed \(no answer from the DNS servers in time\)/);
  });

  it('checks MX only with inbound enabled, and a wrong MX does not fail sending', async () => {
    const { lookup } = memoryDns({ txt: published });
    const check = await checkDomainRecords(lookup, { ...domain, inboundEnabled: true }, settings);
    expect(check.outcome).toBe('verified');
    expect(check.records.at(-1)).toMatchObject({ record: 'mx', status: 'failed' });
  });

  it('reads DKIM and DMARC tags', () => {
    expect(parseTags(' v=DKIM1 ; k=rsa;p=abc= ;')).toEqual(new Map([['v', 'DKIM1'], ['k', 'rsa'], ['p', 'abc=']]));
  });
});

describe('domain status', () => {
  it('background checks inside the window leave a pending domain pending; the last one, or a verify, fails it', () => {
    expect(nextDomainStatus('pending', 'failed', { failPending: false })).toBe('pending');
    expect(nextDomainStatus('pending', 'failed', { failPending: true })).toBe('failed');
    expect(nextDomainStatus('pending', 'verified', { failPending: false })).toBe('verified');
  });

  it('a verified domain whose records fail drifts to failed; an inconclusive check changes nothing', () => {
    expect(nextDomainStatus('verified', 'failed', { failPending: false })).toBe('failed');
    expect(nextDomainStatus('verified', 'inconclusive', { failPending: true })).toBe('verified');
    expect(nextDomainStatus('failed', 'verified', { failPending: false })).toBe('verified');
  });

  it('only a change of status emits an event', () => {
    expect(statusEvent('pending', 'verified')).toBe('domain.verified');
    expect(statusEvent('verified', 'failed')).toBe('domain.failed');
    expect(statusEvent('failed', 'failed')).toBeNull();
    expect(statusEvent('pending', 'pending')).toBeNull();
  });
});
