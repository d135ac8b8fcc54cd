import { signTrackingToken, trackingKey, trackingKeys, verifyTrackingToken } from '../../core/tracking/tokens';

const key = trackingKey(Buffer.alloc(32, 3));
const messageId = '6ba7b810-9dad-41d1-80b4-00c04fd430c8';

describe('tracking tokens', () => {
  it('a signed token names its message and link', () => {
    expect(verifyTrackingToken([key], signTrackingToken(key, { kind: 'click', messageId, position: 12 }))).toEqual({ kind: 'click', messageId, position: 12 });
    expect(verifyTrackingToken([key], signTrackingToken(key, { kind: 'open', messageId }))).toEqual({ kind: 'open', messageId });
  });

  it('any change to a token, or another key, makes it a forgery', () => {
    const token = signTrackingToken(key, { kind: 'click', messageId, position: 1 });
    const [id, position, signature] = token.split('.');
    const forged = [
      `${id}.2.${signature}`,
      `${id.replace(/^./, id[0] === 'a' ? 'b' : 'a')}.${position}.${signature}`,
      `${id}.o.${signature}`,
      `${id}.${position}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`,
      `${id}.${position}`,
      `${id}.01.${signature}`,
      '',
      'not-a-token',
    ];
    for (const token of forged) expect(verifyTrackingToken([key], token)).toBeNull();
    expect(verifyTrackingToken([trackingKey(Buffer.alloc(32, 4))], token)).toBeNull();
  });

  it('links of emails sent before a MASTER_KEY rotation still verify against the previous key in the ring', () => {
    const token = signTrackingToken(key, { kind: 'click', messageId, position: 2 });
    expect(verifyTrackingToken(trackingKeys([Buffer.alloc(32, 4), Buffer.alloc(32, 3)]), token)).toEqual({ kind: 'click', messageId, position: 2 });
  });

  it('the tracking key is derived, not the master key itself', () => {
    expect(trackingKey(Buffer.alloc(32, 3)).export().equals(Buffer.alloc(32, 3))).toBe(false);
  });
});
