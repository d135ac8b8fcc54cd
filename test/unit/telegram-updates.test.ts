import { randomBytes, randomUUID } from 'node:crypto';
import { inboundChatOf, secretTokenMatches, webhookSecretTokens } from '../../providers/telegram/updates';

describe('Telegram updates', () => {
  it('a private message gives its chat id, name and time', () => {
    const update = {
      update_id: 10,
      message: { message_id: 5, date: 1_764_000_000, chat: { id: 123456789, type: 'private', username: 'ann', first_name: 'Ann' }, text: 'hi', entities: [] },
    };
    expect(inboundChatOf(update)).toEqual({
      chatId: '123456789',
      chatType: 'private',
      username: 'ann',
      firstName: 'Ann',
      title: null,
      at: new Date(1_764_000_000_000),
      messageId: 5,
      text: 'hi',
      edited: false,
    });
  });

  it('a group\'s edited message gives the negative group id and its title', () => {
    const update = { update_id: 11, edited_message: { message_id: 6, date: 1_764_000_100, chat: { id: -1001234567890, type: 'supergroup', title: 'Team' } } };
    expect(inboundChatOf(update)).toMatchObject({ chatId: '-1001234567890', chatType: 'supergroup', title: 'Team', username: null, firstName: null, text: null, edited: true });
  });

  it('updates without a message, or malformed ones, give no chat', () => {
    expect(inboundChatOf({ update_id: 12, callback_query: { id: 'x', from: { id: 1 } } })).toBeNull();
    expect(inboundChatOf({ update_id: 13, message: { date: 1, chat: { id: 'abc', type: 'private' } } })).toBeNull();
    expect(inboundChatOf({ update_id: 14, message: { date: 1, chat: { id: 0, type: 'private' } } })).toBeNull();
    expect(inboundChatOf('not an update')).toBeNull();
    expect(inboundChatOf(null)).toBeNull();
  });

  const secrets = webhookSecretTokens([randomBytes(32)]);
  const workspaceId = randomUUID();
  /** A version 1 secret, as made before issue 29: 32 random bytes. */
  const legacy = () => randomBytes(32).toString('base64url');

  it('a webhook secret token is 45 characters Telegram accepts, new each time, and proves itself for its workspace only', () => {
    const token = secrets.generate(workspaceId);
    expect(token).toMatch(/^[A-Za-z0-9_-]{45}$/);
    expect(secrets.generate(workspaceId)).not.toBe(token);
    expect(secrets.check(workspaceId, token)).toBe('signed');
    expect(secrets.check(randomUUID(), token)).toBe('forged');
    expect(webhookSecretTokens([randomBytes(32)]).check(workspaceId, token)).toBe('forged');
  });

  it('after a MASTER_KEY rotation a secret made under the previous key still proves itself; new ones use the new key', () => {
    const [previous, current] = [randomBytes(32), randomBytes(32)];
    const before = webhookSecretTokens([previous]).generate(workspaceId);
    const rotated = webhookSecretTokens([current, previous]);
    expect(rotated.check(workspaceId, before)).toBe('signed');
    expect(webhookSecretTokens([current]).check(workspaceId, rotated.generate(workspaceId))).toBe('signed');
    expect(webhookSecretTokens([current]).check(workspaceId, before)).toBe('forged');
  });

  it('a made-up or altered version 2 token, or none, is forged; a version 1 secret is unsigned', () => {
    const token = secrets.generate(workspaceId);
    const altered = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    expect(secrets.check(workspaceId, altered)).toBe('forged');
    expect(secrets.check(workspaceId, `v2${legacy()}`)).toBe('forged');
    expect(secrets.check(workspaceId, undefined)).toBe('forged');
    expect(secrets.check(workspaceId, '')).toBe('forged');
    expect(secrets.check(workspaceId, legacy())).toBe('unsigned');
  });

  it('the secret token matches only itself: not another, a prefix, a longer one or a missing header', () => {
    const token = secrets.generate(workspaceId);
    expect(secretTokenMatches(token, token)).toBe(true);
    expect(secretTokenMatches(token, secrets.generate(workspaceId))).toBe(false);
    expect(secretTokenMatches(token, token.slice(0, 20))).toBe(false);
    expect(secretTokenMatches(token, `${token}x`)).toBe(false);
    expect(secretTokenMatches(token, '')).toBe(false);
    expect(secretTokenMatches(token, undefined)).toBe(false);
  });
});
