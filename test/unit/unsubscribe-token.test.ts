import { createHmac, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { isMarketing, listUnsubscribeHeaders, unsubscribeUrl } from '../../core/list-unsubscribe';
import { unsubscribeTokens } from '../../core/unsubscribe-token';

describe('unsubscribe tokens', () => {
  const masterKey = randomBytes(32);
  const tokens = unsubscribeTokens([masterKey]);
  const claims = { workspaceId: randomUUID(), messageId: randomUUID(), address: 'ann.lee+news@example.org' };

  it('a signed token names its workspace and message, and picks out its own recipient among the message\'s', () => {
    const link = tokens.read(tokens.sign(claims));
    expect(link).toMatchObject({ workspaceId: claims.workspaceId, messageId: claims.messageId });
    expect(link?.recipient(['bob@example.org', 'Ann.Lee+News@Example.org'])).toBe('Ann.Lee+News@Example.org');
    expect(link?.recipient(['bob@example.org'])).toBeNull();
    // The address is bound by the MAC, never carried: the URL gives nothing about the person away.
    expect(Buffer.from(tokens.sign(claims), 'base64url').toString('latin1')).not.toContain('example.org');
  });

  it('a token re-pointed at another message, signed with another key, or with any bit flipped is refused before any recipient is needed', () => {
    const token = tokens.sign(claims);
    const repointed = Buffer.from(token, 'base64url');
    Buffer.from(randomUUID().replace(/-/g, ''), 'hex').copy(repointed, 17);
    expect(tokens.read(repointed.toString('base64url'))).toBeNull();

    expect(tokens.read(unsubscribeTokens([randomBytes(32)]).sign(claims))).toBeNull();

    const bytes = Buffer.from(token, 'base64url');
    for (let index = 0; index < bytes.length; index += 1) {
      const flipped = Buffer.from(bytes);
      flipped[index] ^= 1;
      expect(tokens.read(flipped.toString('base64url'))).toBeNull();
    }
  });

  /** A version 1 link, as sent before issue 29: one MAC over the payload and the address. */
  const legacyToken = () => {
    const key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging unsubscribe link v1', 32));
    const payload = Buffer.concat([Buffer.from([1]), Buffer.from(claims.workspaceId.replace(/-/g, ''), 'hex'), Buffer.from(claims.messageId.replace(/-/g, ''), 'hex')]);
    const mac = createHmac('sha256', key).update(payload).update(claims.address.toLowerCase(), 'utf8').digest();
    return Buffer.concat([payload, mac]).toString('base64url');
  };

  it('a version 1 link is refused unless version 1 links are accepted; then its recipient is found as before', () => {
    expect(tokens.read(legacyToken())).toBeNull();
    const link = unsubscribeTokens([masterKey], { acceptV1: true }).read(legacyToken());
    expect(link).toMatchObject({ workspaceId: claims.workspaceId, messageId: claims.messageId });
    expect(link?.recipient(['bob@example.org', claims.address])).toBe(claims.address);
    expect(link?.recipient(['bob@example.org'])).toBeNull();
  });

  it('after a MASTER_KEY rotation a link signed under the previous key still finds its recipient; new links use the new key', () => {
    const [previous, current] = [randomBytes(32), randomBytes(32)];
    const before = unsubscribeTokens([previous]).sign(claims);
    const rotated = unsubscribeTokens([current, previous]);
    expect(rotated.read(before)?.recipient([claims.address])).toBe(claims.address);
    expect(unsubscribeTokens([current]).read(rotated.sign(claims))?.recipient([claims.address])).toBe(claims.address);
    // Once the previous key is gone, so is what it signed.
    expect(unsubscribeTokens([current]).read(before)).toBeNull();
  });

  it('anything that is not a token in its one canonical spelling is not read at all', () => {
    const token = tokens.sign(claims);
    for (const bad of [`${token}A`, token.slice(0, -1), `${token}=`, `${token.slice(0, 10)}*${token.slice(11)}`, '', 'x'.repeat(10_000)]) {
      expect(tokens.read(bad)).toBeNull();
    }
    const wrongVersion = Buffer.from(token, 'base64url');
    wrongVersion[0] = 3;
    expect(tokens.read(wrongVersion.toString('base64url'))).toBeNull();
  });
});

describe('List-Unsubscribe headers', () => {
  it('campaign and automation messages are marketing; transactional ones are not', () => {
    expect([isMarketing('campaign'), isMarketing('automation'), isMarketing('transactional')]).toEqual([true, true, false]);
  });

  it('the one-click URL sits under PUBLIC_BASE_URL, in RFC 2369 angle brackets beside the RFC 8058 marker', () => {
    expect(unsubscribeUrl('https://mail.example.com/', 'abc')).toBe('https://mail.example.com/unsubscribe/abc');
    expect(listUnsubscribeHeaders('https://mail.example.com/unsubscribe/abc')).toEqual({
      'List-Unsubscribe': '<https://mail.example.com/unsubscribe/abc>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });
});
