import { TWILIO_ERRORS, twilioError } from '../../core/chat-refusals';
import { telegramRefusal } from '../../providers/telegram/refusals';

describe('chat refusals: which permanent provider answers suppress the recipient', () => {
  it.each([
    [403, 'Forbidden: bot was blocked by the user', 'unsubscribed'],
    [403, 'Forbidden: bot was kicked from the supergroup chat', 'unsubscribed'],
    [403, 'Forbidden: bot is not a member of the channel chat', 'unsubscribed'],
    [403, 'Forbidden: user is deactivated', 'hard_bounce'],
    [400, 'Bad Request: chat not found', 'hard_bounce'],
  ])('Telegram %i "%s" → suppressed as %s', (code, description, reason) => {
    expect(telegramRefusal(code, description).suppress).toBe(reason);
  });

  it.each([
    [401, 'Unauthorized'],
    [400, 'Bad Request: message is too long'],
    [413, 'Request Entity Too Large'],
    [403, 'Forbidden: bot can\'t initiate conversation with a user'],
    // The wording decides, not the code alone: a 400 naming a blocked bot is not Telegram's 403.
    [400, 'bot was blocked by the user'],
  ])('Telegram %i "%s" → fails the message, suppresses nobody', (code, description) => {
    expect(telegramRefusal(code, description).suppress).toBeNull();
  });

  it('a revoked token (401) says to save the new one', () => {
    expect(telegramRefusal(401, 'Unauthorized').meaning).toMatch(/PUT \/integrations\/telegram/);
  });

  it.each([
    [21211, 'hard_bounce'],
    [21614, 'hard_bounce'],
    [21610, 'unsubscribed'],
    [63003, 'hard_bounce'],
    [63014, 'unsubscribed'],
    [63024, 'hard_bounce'],
    [63032, 'unsubscribed'],
  ])('Twilio %i → suppressed as %s', (code, reason) => {
    expect(twilioError(code)?.suppress).toBe(reason);
  });

  it('Twilio 63016 (outside the 24-hour window) is known but suppresses nobody: the window reopens when the contact writes', () => {
    expect(twilioError(63016)).toEqual({ meaning: expect.stringMatching(/24-hour/), suppress: null });
  });

  it('a code the table does not know, or none, means nothing to suppress', () => {
    expect(twilioError(30008)).toBeNull();
    expect(twilioError(null)).toBeNull();
    expect(Object.values(TWILIO_ERRORS).every((entry) => entry.meaning.length > 0)).toBe(true);
  });
});
