import { createPublicKey, createPrivateKey } from 'node:crypto';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import { domainRecords, txtStrings, zoneFile } from '../../core/dns-records';

const settings = { spfInclude: 'spf.messaging.local', inboundMxHost: 'inbound.messaging.local' };
const source = { name: 'example.com', dkimSelector: 'msgabc12345', dkimPublicKey: 'A'.repeat(392), inboundEnabled: false };

describe('DNS records to publish', () => {
  it('SPF, DKIM and DMARC are TXT records at the domain, <selector>._domainkey and _dmarc; the bounce subdomain gets our MX and the SPF', () => {
    expect(domainRecords(source, settings)).toEqual([
      { record: 'spf', type: 'TXT', name: 'example.com', value: 'v=spf1 include:spf.messaging.local ~all', ttl: 3600 },
      { record: 'dkim', type: 'TXT', name: 'msgabc12345._domainkey.example.com', value: `v=DKIM1; k=rsa; p=${'A'.repeat(392)}`, ttl: 3600 },
      { record: 'dmarc', type: 'TXT', name: '_dmarc.example.com', value: 'v=DMARC1; p=none; adkim=r; aspf=r', ttl: 3600 },
      { record: 'return_path_mx', type: 'MX', name: 'bounces.example.com', value: 'inbound.messaging.local', priority: 10, ttl: 3600 },
      { record: 'return_path_spf', type: 'TXT', name: 'bounces.example.com', value: 'v=spf1 include:spf.messaging.local ~all', ttl: 3600 },
    ]);
  });

  it('the MX record to the inbound host is added once inbound is enabled, and the bounce subdomain is no longer needed', () => {
    const records = domainRecords({ ...source, inboundEnabled: true }, settings);
    expect(records.at(-1)).toEqual({ record: 'mx', type: 'MX', name: 'example.com', value: 'inbound.messaging.local', priority: 10, ttl: 3600 });
    expect(records.map((record) => record.record)).not.toContain('return_path_mx');
  });

  it('long TXT text is split into character-strings of at most 255 octets that join back to the text', () => {
    const text = 'x'.repeat(600);
    const strings = txtStrings(text);
    expect(strings.map((string) => string.length)).toEqual([255, 255, 90]);
    expect(strings.join('')).toBe(text);
  });

  it('the zone file has absolute names, the DKIM text split and quoted, and the MX host with its priority', () => {
    const file = zoneFile('example.com', domainRecords({ ...source, inboundEnabled: true }, settings));
    const lines = file.trim().split('\n');
    expect(lines[0]).toBe('; Records to publish for example.com (SPF, DKIM, DMARC, inbound MX)');
    expect(lines[1]).toMatch(/^example\.com\. +3600 IN TXT "v=spf1 include:spf\.messaging\.local ~all"$/);
    expect(lines[2]).toMatch(/^msgabc12345\._domainkey\.example\.com\. 3600 IN TXT \( "v=DKIM1; k=rsa; p=A{237}" "A{155}" \)$/);
    expect(lines[3]).toMatch(/^_dmarc\.example\.com\. +3600 IN TXT "v=DMARC1; p=none; adkim=r; aspf=r"$/);
    expect(lines[4]).toMatch(/^example\.com\. +3600 IN MX {2}10 inbound\.messaging\.local\.$/);
  });

  it('each domain gets its own RSA 2048 key and a random selector; the published key is the DER public key', async () => {
    const [first, second] = await Promise.all([generateDkimKeyPair(), generateDkimKeyPair()]);
    expect(first.selector).toMatch(/^msg[a-z0-9]{8}$/);
    expect(first.selector).not.toBe(second.selector);
    const publicKey = createPublicKey({ key: Buffer.from(first.publicKey, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const derived = createPublicKey(createPrivateKey(first.privateKeyPem)).export({ type: 'spki', format: 'der' }).toString('base64');
    expect(derived).toBe(first.publicKey);
  });
});
