import { canDelegate, FULL_ACCESS, grants, grantsAny, SCOPES } from '../../core/scopes';

describe('scopes', () => {
  it('a full-access key holds every scope', () => {
    for (const scope of SCOPES) expect(grants([FULL_ACCESS], scope)).toBe(true);
  });

  it('a :write scope also grants the matching :read, never the other way round', () => {
    expect(grants(['contacts:write'], 'contacts:read')).toBe(true);
    expect(grants(['contacts:read'], 'contacts:write')).toBe(false);
    expect(grants(['templates:write'], 'contacts:read')).toBe(false);
  });

  it('a scope written a|b accepts either', () => {
    expect(grantsAny(['inbox:send'], ['email:send', 'inbox:send'])).toBe(true);
    expect(grantsAny(['email:send'], ['email:send', 'inbox:send'])).toBe(true);
    expect(grantsAny(['contacts:write'], ['email:send', 'inbox:send'])).toBe(false);
  });

  it('a key delegates only scopes it holds, and only a full key delegates full access', () => {
    expect(canDelegate(['contacts:write'], ['contacts:read'])).toBe(true);
    expect(canDelegate(['contacts:write', 'keys:write'], ['email:send'])).toBe(false);
    expect(canDelegate(['keys:write'], [FULL_ACCESS])).toBe(false);
    expect(canDelegate([FULL_ACCESS], [FULL_ACCESS])).toBe(true);
  });
});
