import { DERIVED_KEY_WINDOW_MS, derivedSendKeys } from '../../core/inbox/send-keys';

describe('derived keys of inbox sends without an idempotencyKey', () => {
  const send = { inboxId: 'inbox-1', scope: 'send' as const, body: { to: ['ann@example.org'], subject: 'Hi', text: 'Hello' } };
  const start = new Date(Math.ceil(Date.parse('2026-11-28T10:00:00Z') / DERIVED_KEY_WINDOW_MS) * DERIVED_KEY_WINDOW_MS);

  it('the same send in one window → the same key, whatever the order of its fields', () => {
    const reordered = { ...send, body: { text: 'Hello', subject: 'Hi', to: ['ann@example.org'] } };
    expect(derivedSendKeys(reordered, new Date(start.getTime() + DERIVED_KEY_WINDOW_MS - 1)).current).toBe(derivedSendKeys(send, start).current);
  });

  it('just past the window\'s edge → the next key, whose previous is the first one; fresh since one window back', () => {
    const next = derivedSendKeys(send, new Date(start.getTime() + DERIVED_KEY_WINDOW_MS));
    expect(next.previous).toBe(derivedSendKeys(send, start).current);
    expect(next.current).not.toBe(next.previous);
    expect(next.freshSince).toEqual(start);
  });

  it('another inbox, thread, recipient, subject or body → another key', () => {
    const key = (identity: Parameters<typeof derivedSendKeys>[0]) => derivedSendKeys(identity, start).current;
    const others = [
      { ...send, inboxId: 'inbox-2' },
      { ...send, scope: { threadId: 't-1' } },
      { ...send, body: { ...send.body, to: ['bob@example.org'] } },
      { ...send, body: { ...send.body, subject: 'Hey' } },
      { ...send, body: { ...send.body, text: 'Hello!' } },
    ];
    expect(new Set([key(send), ...others.map(key)]).size).toBe(6);
  });
});
