import { pickIdentity, type ReachableIdentity } from '../../core/message-channels';

const identity = (overrides: Partial<ReachableIdentity>): ReachableIdentity => ({
  channel: 'email', address: 'ann@example.org', consent: 'opted_in', verified: true, isPrimary: true, ...overrides,
});

describe('the identity a message to a contact goes to', () => {
  it('no channel asked → the first channel in the order email, whatsapp, telegram with a primary verified opted-in identity', () => {
    const telegram = identity({ channel: 'telegram', address: '42' });
    const whatsapp = identity({ channel: 'whatsapp', address: '+14155550100' });
    expect(pickIdentity([telegram, whatsapp])).toBe(whatsapp);
    expect(pickIdentity([telegram, identity({ consent: 'unknown' })])).toBe(telegram);
  });

  it('a channel asked → only that channel\'s identity, or null', () => {
    const email = identity({});
    expect(pickIdentity([email], 'telegram')).toBeNull();
    expect(pickIdentity([email, identity({ channel: 'telegram', address: '7' })], 'telegram')).toMatchObject({ address: '7' });
  });

  it('not primary, not verified, unknown or withdrawn consent → never picked', () => {
    for (const unusable of [{ isPrimary: false }, { verified: false }, { consent: 'unknown' as const }, { consent: 'opted_out' as const }]) {
      expect(pickIdentity([identity(unusable)])).toBeNull();
    }
  });
});
