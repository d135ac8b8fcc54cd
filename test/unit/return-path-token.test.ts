import { randomBytes, randomUUID } from 'node:crypto';
import { returnPathAddress, returnPathDomainOf, returnPathTokenOf, returnPathTokens } from '../../core/bounces/return-path';

describe('VERP return-path tokens', () => {
  const key = randomBytes(32);
  const tokens = returnPathTokens([key]);

  test('a token reads back as the message and recipient it was signed for, in any letter case', () => {
    const messageId = randomUUID();
    const token = tokens.sign({ messageId, recipientIndex: 3 });
    expect(tokens.read(token)).toEqual({ messageId, recipientIndex: 3 });
    expect(tokens.read(token.toUpperCase())).toEqual({ messageId, recipientIndex: 3 });
  });

  test('the return path fits the 64 octets of a local part', () => {
    const address = returnPathAddress(tokens.sign({ messageId: randomUUID(), recipientIndex: 255 }), 'bounces.example.com');
    expect(address.split('@')[0].length).toBeLessThanOrEqual(64);
    expect(returnPathTokenOf(address)).toBe(address.slice('bounces+'.length, address.indexOf('@')));
  });

  test('an altered token (another recipient index, one character changed) or another key is refused', () => {
    const messageId = randomUUID();
    const token = tokens.sign({ messageId, recipientIndex: 0 });
    const other = tokens.sign({ messageId, recipientIndex: 1 });
    const swapped = `${other.slice(0, 29)}${token.slice(29)}`;
    expect(tokens.read(swapped)).toBeNull();
    const flipped = `${token.slice(0, 10)}${token[10] === 'a' ? 'b' : 'a'}${token.slice(11)}`;
    expect(tokens.read(flipped)).toBeNull();
    expect(returnPathTokens([randomBytes(32)]).read(token)).toBeNull();
    expect(tokens.read('')).toBeNull();
    expect(tokens.read('not-base32!')).toBeNull();
  });

  test('tokens signed before a key rotation still verify under the ring that keeps the old key', () => {
    const messageId = randomUUID();
    const token = tokens.sign({ messageId, recipientIndex: 2 });
    expect(returnPathTokens([randomBytes(32), key]).read(token)).toEqual({ messageId, recipientIndex: 2 });
  });

  test('an address that is not a return path has no token', () => {
    expect(returnPathTokenOf('ann@example.com')).toBeNull();
    expect(returnPathTokenOf('bounces+@example.com')).toBeNull();
  });
});

describe('the return-path domain', () => {
  const checks = (...verified: string[]) => verified.map((record) => ({ record, status: 'verified' }));

  test('a domain that receives at our MX is its own return path; one whose bounce subdomain checks uses it', () => {
    expect(returnPathDomainOf({ name: 'example.com', inboundEnabled: true, recordChecks: checks('spf', 'mx') })).toBe('example.com');
    expect(returnPathDomainOf({ name: 'example.com', inboundEnabled: false, recordChecks: checks('return_path_mx', 'return_path_spf') })).toBe('bounces.example.com');
  });

  test('a domain whose return-path records do not (all) check keeps the From address as envelope sender', () => {
    expect(returnPathDomainOf({ name: 'example.com', inboundEnabled: false, recordChecks: checks('spf', 'dkim', 'dmarc') })).toBeNull();
    expect(returnPathDomainOf({ name: 'example.com', inboundEnabled: false, recordChecks: checks('return_path_mx') })).toBeNull();
    expect(returnPathDomainOf({ name: 'example.com', inboundEnabled: true, recordChecks: [{ record: 'mx', status: 'failed' }] })).toBeNull();
  });
});
