import { loadConfig } from '../../core/config';
import { parseE164 } from '../../core/phone-numbers';
import { chatStatusEvent } from '../../core/delivery';

describe('WhatsApp rules', () => {
  it('a dialable number in E.164 → itself; anything else → null', () => {
    expect(parseE164('+14155552671')).toBe('+14155552671');
    expect(parseE164('+4915112345678')).toBe('+4915112345678');
    for (const value of ['14155552671', '+1 415 555 2671', '+1415555', '+99912345678', '+01415555267', 'whatsapp:+14155552671', '']) {
      expect({ value, parsed: parseE164(value) }).toEqual({ value, parsed: null });
    }
  });

  it('Twilio statuses → sent, delivered, a human open, failed; intermediate ones → nothing', () => {
    expect(chatStatusEvent('sent')).toEqual({ type: 'sent', classification: null });
    expect(chatStatusEvent('delivered')).toEqual({ type: 'delivered', classification: null });
    expect(chatStatusEvent('read')).toEqual({ type: 'open', classification: 'human' });
    expect(chatStatusEvent('failed')).toEqual({ type: 'failed', classification: null });
    expect(chatStatusEvent('undelivered')).toEqual({ type: 'failed', classification: null });
    for (const status of ['queued', 'accepted', 'sending', 'receiving', 'received', 'canceled', '']) {
      expect({ status, event: chatStatusEvent(status) }).toEqual({ status, event: null });
    }
  });

  it('TWILIO_API_URL defaults to Twilio and must be a URL', () => {
    expect(loadConfig({}).TWILIO_API_URL).toBe('https://api.twilio.com');
    expect(() => loadConfig({ TWILIO_API_URL: 'not a url' })).toThrow(/TWILIO_API_URL/);
  });
});
