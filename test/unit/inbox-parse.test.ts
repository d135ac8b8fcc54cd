import { parseInboundMail, replyTextOf } from '../../activities/inbox-parse';
import { mimeDefects } from '../../core/inbox/mime-defects';

describe('reply text of an inbound message', () => {
  it('Gmail\'s "On … wrote:" and its quoted lines are cut off', () => {
    expect(replyTextOf('Thanks, sounds good!\n\nOn Tue, Nov 24, 2026 at 10:00 AM Support <support@x.example> wrote:\n> Hello\n> there\n', null)).toBe('Thanks, sounds good!');
  });

  it('Outlook\'s "From: … Sent: …" header block and what follows are cut off', () => {
    const outlook = 'Sure, Friday works.\n\n________________________________\nFrom: Support <support@x.example>\nSent: Tuesday, November 24, 2026 10:00 AM\nTo: Alice <alice@y.example>\nSubject: Hello\n\nHello there\n';
    expect(replyTextOf(outlook, null)).toBe('Sure, Friday works.');
  });

  it('Apple Mail\'s quote and its "Sent from my iPhone" signature are cut off', () => {
    expect(replyTextOf('Yes please.\n\nSent from my iPhone\n\n> On Nov 24, 2026, at 10:00 AM, Support <support@x.example> wrote:\n>\n> Hello there\n', null)).toBe('Yes please.');
  });

  it('an HTML-only message is read as text first', () => {
    expect(replyTextOf(null, '<p>Works for me.</p><blockquote>On Tue, Nov 24, 2026 at 10:00 AM Support wrote:<br>Hello</blockquote>')).toMatch(/^Works for me\./);
  });

  it('a message that is all quote keeps its text rather than coming out empty; no text at all is null', () => {
    expect(replyTextOf('> only a quote\n', null)).toBe('> only a quote');
    expect(replyTextOf('', null)).toBeNull();
  });
});

describe('defects of a raw message', () => {
  const well = 'From: a@b.example\r\nContent-Type: multipart/mixed; boundary="zz"\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nhi\r\n--zz--\r\n';

  it('a well-formed multipart has none', () => {
    expect(mimeDefects(Buffer.from(well), 'a@b.example')).toEqual([]);
  });

  it('a multipart never closed, one without a boundary, no header block, no From: each is named', () => {
    expect(mimeDefects(Buffer.from(well.replace('--zz--', '')), 'a@b.example')).toEqual(['multipart_unterminated']);
    expect(mimeDefects(Buffer.from(well.replace('; boundary="zz"', '')), 'a@b.example')).toEqual(['multipart_without_boundary']);
    expect(mimeDefects(Buffer.from('just some bytes'), null)).toEqual(['no_header_separator', 'no_from']);
  });

  it('parsing garbage answers what it could read and its defects, without throwing', async () => {
    const parsed = await parseInboundMail(Buffer.from([0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x41]));
    expect(parsed).toMatchObject({ fromAddress: null, subject: null, attachments: [] });
    expect(parsed.defects).toEqual(expect.arrayContaining(['no_header_separator', 'no_from']));
  });

  it('In-Reply-To and References come out normalized, without brackets', async () => {
    const parsed = await parseInboundMail(Buffer.from('From: a@b.example\r\nIn-Reply-To: <X1@Our.Example>\r\nReferences: <r0@a.example> <X1@Our.Example>\r\n\r\nhi\r\n'));
    expect(parsed).toMatchObject({ inReplyTo: 'X1@our.example', references: ['r0@a.example', 'X1@our.example'] });
  });
});
