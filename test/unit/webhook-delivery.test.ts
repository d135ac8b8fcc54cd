import { retryDelayAfter, verdictOfStatus, WEBHOOK_ATTEMPTS } from '../../core/webhook-delivery';
import { webhookBody } from '../../core/webhook-payloads';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('webhook delivery rules', () => {
  it('after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then no more', () => {
    const delays = Array.from({ length: WEBHOOK_ATTEMPTS }, (_, i) => retryDelayAfter(i + 1));
    expect(delays).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, null]);
    expect(retryDelayAfter(0)).toBeNull();
  });

  it('2xx succeeds, 410 is gone, every other answer failed', () => {
    expect([200, 202, 204, 299].map(verdictOfStatus)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(verdictOfStatus(410)).toBe('gone');
    expect([199, 301, 400, 404, 429, 500, 503].map(verdictOfStatus)).toEqual(Array(7).fill('failed'));
  });
});

describe('webhook bodies', () => {
  const message = {
    id: 'm1', kind: 'transactional', channel: 'email', from: 'Acme <hi@acme.test>', to: ['ann@example.org'], subject: 'Hi',
    contactId: null, campaignId: null, enrollmentId: null, automationId: null,
  };
  const event = {
    kind: 'message_event' as const, classification: null, reason: null, bounceType: null, linkUrl: null, linkId: null, linkRole: null,
    data: {}, createdAt: new Date('2025-03-01T10:00:00Z'), message,
  };

  it('an email event carries the message and what the event adds: a click its link, a bounce its type and reason', () => {
    const clicked = webhookBody('email.clicked', { ...event, type: 'click', classification: 'human', linkUrl: 'https://acme.test/a', linkId: 'l0', linkRole: 'cta' });
    expect(clicked).toEqual({
      type: 'email.clicked',
      createdAt: '2025-03-01T10:00:00.000Z',
      data: {
        emailId: 'm1', kind: 'transactional', channel: 'email', from: 'Acme <hi@acme.test>', to: ['ann@example.org'], subject: 'Hi',
        contactId: null, campaignId: null, enrollmentId: null, automationId: null, classification: 'human', link: { url: 'https://acme.test/a', id: 'l0', role: 'cta' },
      },
    });
    const bounced = webhookBody('email.bounced', { ...event, type: 'bounce', bounceType: 'hard', reason: 'mailbox unknown', data: { recipients: ['ann@example.org'] } });
    expect(bounced.data).toMatchObject({ bounceType: 'hard', reason: 'mailbox unknown', recipients: ['ann@example.org'] });
  });

  it('a journey message\'s event names its enrollment and automation', () => {
    const journey = { ...message, kind: 'automation', channel: 'whatsapp', enrollmentId: 'e1', automationId: 'a1', contactId: 'c1' };
    const delivered = webhookBody('message.delivered', { ...event, type: 'delivered', message: journey });
    expect(delivered.data).toMatchObject({ messageId: 'm1', kind: 'automation', enrollmentId: 'e1', automationId: 'a1', contactId: 'c1' });
  });

  it('a platform event passes its data through', () => {
    const data = { id: 'd1', name: 'mail.acme.test', status: 'verified' };
    expect(webhookBody('domain.verified', { kind: 'platform_event', data, createdAt: new Date('2025-03-01T10:00:00Z') })).toEqual({
      type: 'domain.verified',
      createdAt: '2025-03-01T10:00:00.000Z',
      data,
    });
  });
});
