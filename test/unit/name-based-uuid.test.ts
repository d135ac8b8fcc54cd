import { nameBasedUuid } from '../../core/name-based-uuid';

describe('name-based ids', () => {
  it('the same parts give the same UUID of version 8 and the RFC variant; other parts, or the same text split otherwise, another', () => {
    const id = nameBasedUuid('platform-event', 'workspace', 'SM1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(nameBasedUuid('platform-event', 'workspace', 'SM1')).toBe(id);
    expect(nameBasedUuid('platform-event', 'workspace', 'SM2')).not.toBe(id);
    expect(nameBasedUuid('platform-event', 'works', 'paceSM1')).not.toBe(id);
  });
});
