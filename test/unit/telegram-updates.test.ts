import { generateWebhookSecretToken, inboundChatOf, secretTokenMatches } from '../../core/telegram-updates';

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

  it('a webhook secret token is 43 characters Telegram accepts, new each time', () => {
    const token = generateWebhookSecretToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecretToken()).not.toBe(token);
  });

  it('the secret token matches only itself: not another, a prefix, a longer one or a missing header', () => {
    const token = generateWebhookSecretToken();
    expect(secretTokenMatches(token, token)).toBe(true);
    expect(secretTokenMatches(token, generateWebhookSecretToken())).toBe(false);
    expect(secretTokenMatches(token, token.slice(0, 20))).toBe(false);
    expect(secretTokenMatches(token, `${token}x`)).toBe(false);
    expect(secretTokenMatches(token, '')).toBe(false);
    expect(secretTokenMatches(token, undefined)).toBe(false);
  });
});
