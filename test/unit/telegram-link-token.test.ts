import { randomUUID } from 'node:crypto';
import { startToken, telegramLinkTokens } from '../../core/telegram-link-token';

describe('Telegram /start link tokens', () => {
  const tokens = telegramLinkTokens([Buffer.alloc(32, 7)]);
  const workspaceId = randomUUID();
  const contactId = randomUUID();
  const now = new Date('2026-11-26T00:00:00Z');
  const expiresAt = new Date('2026-12-03T00:00:00Z');

  it('a signed token reads back as its contact within its workspace, and fits Telegram\'s 64-character start parameter', () => {
    const token = tokens.sign({ workspaceId, contactId, expiresAt });
    expect(token).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(tokens.read(workspaceId, token, now)).toBe(contactId);
  });

  it('another workspace, an expired token, another key or any altered character → null', () => {
    const token = tokens.sign({ workspaceId, contactId, expiresAt });
    expect(tokens.read(randomUUID(), token, now)).toBeNull();
    expect(tokens.read(workspaceId, token, expiresAt)).toBeNull();
    expect(telegramLinkTokens([Buffer.alloc(32, 8)]).read(workspaceId, token, now)).toBeNull();
    for (let i = 0; i < token.length; i += 1) {
      const altered = `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`;
      expect(tokens.read(workspaceId, altered, now)).toBeNull();
    }
    expect(tokens.read(workspaceId, 'not a token', now)).toBeNull();
  });

  it('a link made just before a MASTER_KEY rotation still links with the previous key in the ring', () => {
    const token = tokens.sign({ workspaceId, contactId, expiresAt });
    expect(telegramLinkTokens([Buffer.alloc(32, 9), Buffer.alloc(32, 7)]).read(workspaceId, token, now)).toBe(contactId);
  });

  it('the token of "/start <token>" (also addressed to the bot), and null for other texts', () => {
    expect(startToken('/start abc_D-9')).toBe('abc_D-9');
    expect(startToken('/start@acme_bot abc')).toBe('abc');
    expect(startToken('/start')).toBeNull();
    expect(startToken('hello /start abc')).toBeNull();
    expect(startToken(null)).toBeNull();
  });
});
