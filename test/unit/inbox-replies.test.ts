import { parseMailboxes } from '../../core/addresses';
import { type AnsweredMessage, MAX_REFERENCES, quoted, referenceHeaders, replyRecipients, replyReferences, replySubject } from '../../core/inbox/replies';

const parse = (value: string) => {
  const parsed = parseMailboxes(value);
  return parsed.ok && parsed.mailboxes.length === 1 ? parsed.mailboxes[0] : null;
};

const inbound = (overrides: Partial<AnsweredMessage> = {}): AnsweredMessage => ({
  direction: 'in',
  messageIdHeader: 'abc@mail.example.org',
  references: ['root@mail.example.org'],
  fromAddress: 'ann@example.org',
  fromName: 'Ann',
  to: ['support@inbox.example.com', 'Bob <bob@example.org>'],
  cc: ['carol@example.org', 'SUPPORT@inbox.example.com'],
  subject: 'Order 42',
  text: 'Where is it?\nThanks',
  html: null,
  createdAt: new Date('2026-01-02T03:04:05Z'),
  ...overrides,
});

describe('reply subject', () => {
  it('a plain subject → "Re: " once', () => expect(replySubject('Order 42')).toBe('Re: Order 42'));
  it('a subject already starting with Re: in any case → kept as it is', () => {
    expect(replySubject('RE: Order 42')).toBe('RE: Order 42');
    expect(replySubject(' re:Order')).toBe('re:Order');
  });
  it('no subject → "Re:"', () => expect(replySubject(null)).toBe('Re:'));
  it('a subject with line breaks → one line', () => expect(replySubject('Order\r\nBcc: x@y.example')).toBe('Re: Order Bcc: x@y.example'));
});

describe('reply references', () => {
  it('In-Reply-To is the answered id and References ends with it', () => {
    expect(replyReferences(inbound())).toEqual({ inReplyTo: 'abc@mail.example.org', references: ['root@mail.example.org', 'abc@mail.example.org'] });
  });

  it('a long chain keeps the root and the newest ids, the answered one last', () => {
    const chain = Array.from({ length: 40 }, (_, i) => `m${i}@x.example`);
    const { references } = replyReferences({ messageIdHeader: 'last@x.example', references: chain });
    expect(references).toHaveLength(MAX_REFERENCES);
    expect(references[0]).toBe('m0@x.example');
    expect(references[references.length - 1]).toBe('last@x.example');
  });

  it('our own message SES sent → SES\'s Message-ID (the one its recipients hold), never the one we generated', () => {
    const ours = { direction: 'out' as const, messageIdHeader: 'our-id@shop.example', references: ['root@x.example'], sentThroughSes: { providerMessageId: 'p-1', region: 'eu-west-1' } };
    expect(replyReferences(ours)).toEqual({ inReplyTo: 'p-1@eu-west-1.amazonses.com', references: ['root@x.example', 'p-1@eu-west-1.amazonses.com'] });
    expect(replyReferences({ ...ours, sentThroughSes: null })).toEqual({ inReplyTo: 'our-id@shop.example', references: ['root@x.example', 'our-id@shop.example'] });
  });

  it('an answered message without a Message-ID → no In-Reply-To, its References kept', () => {
    expect(replyReferences({ messageIdHeader: null, references: ['a@b.example'] })).toEqual({ inReplyTo: null, references: ['a@b.example'] });
  });

  it('header values put each id in brackets and drop ids that would break out of the header', () => {
    expect(referenceHeaders('a@b.example', ['r@b.example', 'bad id@x', 'x>@y\r\nBcc: z@z'])).toEqual({
      'In-Reply-To': '<a@b.example>',
      References: '<r@b.example>',
    });
    expect(referenceHeaders(undefined, undefined)).toEqual({});
  });
});

describe('reply recipients', () => {
  it('a reply to an inbound message → its sender only', () => {
    expect(replyRecipients(inbound(), 'support@inbox.example.com', false, parse)).toEqual({ to: ['Ann <ann@example.org>'], cc: [] });
  });

  it('reply-all → the sender and the other To and Cc recipients, never the inbox itself (any case), each once', () => {
    const answered = inbound({ cc: ['carol@example.org', 'SUPPORT@inbox.example.com', 'bob@example.org'] });
    expect(replyRecipients(answered, 'Support@inbox.example.com', true, parse)).toEqual({
      to: ['Ann <ann@example.org>', 'Bob <bob@example.org>'],
      cc: ['carol@example.org'],
    });
  });

  it('reply-all to a message whose From failed authentication → its From alone, not the To and Cc it named', () => {
    const spoofed = inbound({ cc: ['carol@example.org'], senderAuthenticated: false });
    expect(replyRecipients(spoofed, 'support@inbox.example.com', true, parse)).toEqual({ to: ['Ann <ann@example.org>'], cc: [] });
    const vouched = inbound({ cc: ['carol@example.org'], senderAuthenticated: true });
    expect(replyRecipients(vouched, 'support@inbox.example.com', true, parse).cc).toEqual(['carol@example.org']);
  });

  it('answering our own last message → its recipients again', () => {
    const ours = inbound({ direction: 'out', fromAddress: 'support@inbox.example.com', to: ['dan@example.org'], cc: [] });
    expect(replyRecipients(ours, 'support@inbox.example.com', false, parse)).toEqual({ to: ['dan@example.org'], cc: [] });
  });
});

describe('quoting', () => {
  it('text → the answer, the attribution line and every previous line prefixed "> "', () => {
    const { text, html } = quoted({ text: 'On its way.' }, inbound());
    expect(text).toBe('On its way.\n\nOn Fri, 02 Jan 2026 03:04:05 GMT, Ann <ann@example.org> wrote:\n> Where is it?\n> Thanks');
    expect(html).toBeUndefined();
  });

  it('html → the previous message in a cite blockquote, plain text escaped', () => {
    const { html } = quoted({ html: '<p>Soon</p>' }, inbound({ text: '<script>x</script>' }));
    expect(html).toContain('<blockquote type="cite"');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(html).not.toContain('<script>');
  });
});
