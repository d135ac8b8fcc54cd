import { recipientsOfMessage } from '../../core/delivery';
import { parseSesNotification } from '../../providers/ses/notifications';

const mail = { messageId: '0100018c-ses-id', timestamp: '2026-11-22T10:00:00.000Z' };

describe('SES notifications', () => {
  it('a permanent bounce is hard and names the bounced recipients', () => {
    const event = parseSesNotification({
      notificationType: 'Bounce',
      mail,
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'gone@example.org' }], timestamp: '2026-11-22T10:00:05.000Z' },
    });
    expect(event).toEqual({
      type: 'bounce',
      providerMessageId: '0100018c-ses-id',
      bounceType: 'hard',
      detail: 'Permanent/General',
      recipients: ['gone@example.org'],
      at: new Date('2026-11-22T10:00:05.000Z'),
    });
  });

  it.each(['Transient', 'Undetermined'])('a %s bounce is soft', (bounceType) => {
    const event = parseSesNotification({ eventType: 'Bounce', mail, bounce: { bounceType, bouncedRecipients: [{ emailAddress: 'full@example.org' }] } });
    expect(event).toMatchObject({ type: 'bounce', bounceType: 'soft' });
  });

  it('reads complaints and deliveries in both notification formats', () => {
    expect(parseSesNotification({ notificationType: 'Complaint', mail, complaint: { complainedRecipients: [{ emailAddress: 'a@x.org' }] } })).toMatchObject({
      type: 'complaint',
      recipients: ['a@x.org'],
    });
    expect(parseSesNotification({ eventType: 'Delivery', mail, delivery: { recipients: ['a@x.org'], timestamp: '2026-11-22T10:00:01Z' } })).toMatchObject({
      type: 'delivered',
      recipients: ['a@x.org'],
    });
  });

  it('ignores what it does not act on, and malformed payloads', () => {
    expect(parseSesNotification({ eventType: 'Send', mail })).toBeNull();
    expect(parseSesNotification({ notificationType: 'Bounce', mail })).toBeNull();
    expect(parseSesNotification('nonsense')).toBeNull();
  });
});

describe('recipients a bounce or complaint may suppress', () => {
  const sentTo = ['Ann Lee <Ann@Example.org>', '"Carl, Jr." <carl@example.org>', 'bea@xn--bcher-kva.de'];

  it('keeps the message\'s own recipients, compared without case, display names or IDN form, and sets the others apart', () => {
    expect(recipientsOfMessage(['ann@example.org', 'CARL@example.ORG', 'bea@bücher.de', 'ceo@victim.example'], sentTo)).toEqual({
      matched: ['ann@example.org', 'CARL@example.ORG', 'bea@bücher.de'],
      foreign: ['ceo@victim.example'],
    });
  });

  it('an address that does not parse is never a recipient', () => {
    expect(recipientsOfMessage(['not an address', ''], sentTo)).toEqual({ matched: [], foreign: ['not an address', ''] });
  });
});
