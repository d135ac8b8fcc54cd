import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readReportMail } from '../../activities/bounce-reports';
import { classifyStatus, parseReport, type ReportVerdict, verdictFor } from '../../core/bounces/reports';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'bounces', `${name}.eml`));
const verdict = async (name: string, recipient: string): Promise<ReportVerdict | null> =>
  verdictFor(parseReport(await readReportMail(fixture(name))), recipient);

describe('bounce and complaint reports', () => {
  test('an RFC 3464 DSN (Postfix) for an unknown user is a hard mailbox bounce with its diagnostic code', async () => {
    expect(await verdict('rfc3464', 'nobody@example.net')).toEqual({
      event: 'bounce',
      bounceType: 'hard',
      category: 'mailbox',
      status: '5.1.1',
      diagnosticCode: '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
      reportedRecipient: 'nobody@example.net',
    });
  });

  test('a plain-text Postfix bounce without a report part is read from its text', async () => {
    expect(await verdict('postfix-plain', 'gone@example.org')).toMatchObject({
      event: 'bounce', bounceType: 'hard', status: '5.1.1', reportedRecipient: 'gone@example.org',
    });
  });

  test('an Exim bounce names the failed address and the remote reply', async () => {
    const found = await verdict('exim', 'missing@example.com');
    expect(found).toMatchObject({ event: 'bounce', bounceType: 'hard', status: '5.1.1', reportedRecipient: 'missing@example.com' });
    expect(found?.event === 'bounce' && found.diagnosticCode).toContain('User unknown');
  });

  test('a qmail bounce with a bare 550 "No such user" is hard', async () => {
    expect(await verdict('qmail', 'olduser@example.biz')).toMatchObject({
      event: 'bounce', bounceType: 'hard', category: 'mailbox', status: '5.0.0', reportedRecipient: 'olduser@example.biz',
    });
  });

  test("Gmail's DSN keeps its multi-line diagnostic in one line", async () => {
    const found = await verdict('gmail', 'no.such.person@gmail.com');
    expect(found).toMatchObject({ event: 'bounce', bounceType: 'hard', status: '5.1.1', reportedRecipient: 'no.such.person@gmail.com' });
    expect(found?.event === 'bounce' && found.diagnosticCode).toMatch(/^550-5\.1\.1 The email account .* gsmtp$/);
  });

  test("Outlook/Exchange's 5.1.10 RecipientNotFound is a hard bounce", async () => {
    expect(await verdict('exchange', 'former.employee@contoso.com')).toMatchObject({
      event: 'bounce', bounceType: 'hard', status: '5.1.10', reportedRecipient: 'former.employee@contoso.com',
    });
  });

  test('a DSN with Action: delayed is a delivery delay, not a bounce', async () => {
    expect(await verdict('delayed', 'slow@example.net')).toEqual({
      event: 'delivery_delayed', status: '4.7.1', diagnosticCode: '451 4.7.1 Greylisted, please try again later', reportedRecipient: 'slow@example.net',
    });
  });

  test('a 5.7.1 policy refusal is a soft bounce (the address is not suppressed)', async () => {
    expect(await verdict('policy', 'careful@example.net')).toMatchObject({ event: 'bounce', bounceType: 'soft', category: 'policy', status: '5.7.1' });
  });

  test('an ARF report is a complaint of its feedback type', async () => {
    expect(await verdict('arf', 'reader@example.com')).toEqual({ event: 'complaint', feedbackType: 'abuse', reportedRecipient: 'reader@example.com' });
  });

  test('an out-of-office reply to the return path reports nothing', async () => {
    expect(await verdict('out-of-office', 'reader@example.com')).toBeNull();
  });

  test('a DSN naming another recipient is still about the return path\'s recipient, and says whom it named', async () => {
    expect(await verdict('rfc3464', 'ann@example.net')).toMatchObject({ event: 'bounce', bounceType: 'hard', reportedRecipient: 'nobody@example.net' });
  });

  test.each([
    ['5.1.1', null, 'hard', 'mailbox'],
    ['5.1.10', null, 'hard', 'mailbox'],
    ['5.2.1', null, 'hard', 'disabled'],
    ['5.2.2', null, 'soft', 'mailbox_full'],
    ['5.7.1', null, 'soft', 'policy'],
    ['5.7.26', null, 'soft', 'policy'],
    ['5.1.8', null, 'soft', 'policy'],
    ['4.4.1', null, 'soft', 'transient'],
    ['5.0.0', '550 User unknown', 'hard', 'mailbox'],
    ['5.0.0', '550 Message too large', 'soft', 'other'],
    [null, null, 'soft', 'other'],
  ] as const)('status %s (%s) is %s/%s', (status, diagnostic, bounceType, category) => {
    expect(classifyStatus(status, diagnostic)).toEqual({ bounceType, category });
  });
});
