import { simpleParser } from 'mailparser';
import { createSmtpChannel } from '../../providers/smtp/send';
import { PermanentSendError } from '../../core/delivery';
import type { OutboundEmail } from '../../providers/email-channel';
import { buildMime } from '../../providers/mime';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';

function email(overrides: Partial<OutboundEmail> = {}): OutboundEmail {
  return {
    messageId: '2f1c7a0e-1111-4222-8333-944445555666',
    from: { name: 'Acme', address: 'hello@acme.test' },
    to: [
      { name: 'Ann', address: 'ann@example.org' },
      { name: 'Doe, John', address: 'john@example.org' },
    ],
    cc: [{ name: null, address: 'cc@example.org' }],
    bcc: [{ name: null, address: 'hidden@example.org' }],
    replyTo: [{ name: null, address: 'support@acme.test' }],
    subject: 'Your order',
    html: '<p>Hello <img src="cid:logo"></p>',
    text: 'Hello',
    headers: { 'X-Entity-Ref-ID': 'ref-1' },
    attachments: [
      { filename: 'invoice.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.4 test') },
      { filename: 'logo.png', contentType: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentId: 'logo' },
    ],
    ...overrides,
  };
}

describe('the SMTP provider', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.close());

  it('delivers one MIME message: every To in the To header, Cc visible, Bcc only in the envelope', async () => {
    const channel = createSmtpChannel(sink.url);
    const outbound = email();
    const receipt = await channel.send(outbound, await buildMime(outbound));
    await channel.close();

    expect(receipt.provider).toBe('smtp');
    const mail = sink.received.at(-1)!;
    expect(mail.recipients.sort()).toEqual(['ann@example.org', 'cc@example.org', 'hidden@example.org', 'john@example.org']);
    expect(mail.raw).not.toMatch(/hidden@example\.org/);
    const parsed = await simpleParser(mail.raw, { skipImageLinks: true });
    expect(parsed.to && !Array.isArray(parsed.to) && parsed.to.value.map((a) => a.address)).toEqual(['ann@example.org', 'john@example.org']);
    expect(parsed.to && !Array.isArray(parsed.to) && parsed.to.value[1].name).toBe('Doe, John');
    expect(parsed.cc && !Array.isArray(parsed.cc) && parsed.cc.value[0].address).toBe('cc@example.org');
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.replyTo?.value[0].address).toBe('support@acme.test');
    expect(parsed.messageId).toBe('<2f1c7a0e-1111-4222-8333-944445555666@acme.test>');
    expect(parsed.headers.get('x-entity-ref-id')).toBe('ref-1');
    expect(parsed.html).toContain('cid:logo');
    expect(parsed.text?.trim()).toBe('Hello');
    // Inline parts sit in multipart/related ahead of the attachments, so compare without order.
    const parts = parsed.attachments.map((a) => [a.filename, a.contentType, a.contentDisposition, a.cid ?? null]);
    expect(parts.sort()).toEqual([
      ['invoice.pdf', 'application/pdf', 'attachment', null],
      ['logo.png', 'image/png', 'inline', 'logo'],
    ]);
  });

  it('a text-only email is a single text/plain part', async () => {
    const outbound = email({ html: undefined, attachments: [], text: 'Just text, https://example.org as written' });
    const parsed = await simpleParser(await buildMime(outbound));
    expect(parsed.html).toBe(false);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'text/plain' });
    expect(parsed.text?.trim()).toBe('Just text, https://example.org as written');
  });

  it('a 5xx to MAIL FROM (the relay refuses us) is permanent; a 5xx to DATA refuses every recipient on the receipt; a 4xx is left to retries', async () => {
    const channel = createSmtpChannel(sink.url);
    const outbound = email();
    sink.refuseSender([550, '5.7.1 Relay access denied']);
    await expect(channel.send(outbound, await buildMime(outbound))).rejects.toBeInstanceOf(PermanentSendError);
    sink.refuseSender(null);
    sink.failNext(1, 550);
    const refused = await channel.send(outbound, await buildMime(outbound));
    expect(refused.refused?.map((each) => [each.address, each.recipientIndex, each.responseCode, each.transient])).toEqual([
      ['ann@example.org', 0, 550, false],
      ['john@example.org', 1, 550, false],
      ['cc@example.org', 2, 550, false],
      ['hidden@example.org', 3, 550, false],
    ]);
    sink.failNext(1, 451);
    const transient = channel.send(outbound, await buildMime(outbound));
    await expect(transient).rejects.toThrow();
    await expect(transient).rejects.not.toBeInstanceOf(PermanentSendError);
    await channel.close();
  });
});
