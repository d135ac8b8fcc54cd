import { headerBlockOf, headerValue } from '../../core/inbox/header-block';

describe('header block', () => {
  const raw = Buffer.from('From: a@example.com\r\nMessage-ID:\r\n  <id-1@example.com>\r\nSubject: hi\r\n\r\nBody\r\nMessage-ID: <not-a-header@x>\r\n');

  it('stops at the first empty line', () => {
    expect(headerBlockOf(raw)).toBe('From: a@example.com\r\nMessage-ID:\r\n  <id-1@example.com>\r\nSubject: hi');
  });

  it('reads a folded field case-insensitively, never from the body', () => {
    expect(headerValue(headerBlockOf(raw), 'message-id')).toBe('<id-1@example.com>');
    expect(headerValue(headerBlockOf(raw), 'In-Reply-To')).toBeNull();
  });

  it('a message with no body is all header; bytes beyond ASCII do not break it', () => {
    const block = headerBlockOf(Buffer.concat([Buffer.from('Subject: caf'), Buffer.from([0xe9]), Buffer.from('\nX: y')]));
    expect(headerValue(block, 'x')).toBe('y');
    expect(headerValue(block, 'subject')).toBe('caf\u00e9');
  });

  it('a continuation line before any field is not a field', () => {
    expect(headerValue(' Subject: no\nSubject: yes', 'subject')).toBe('yes');
  });
});
