import { twilioSignature } from '../helpers/twilio-stand-in';
import { twilioInboundOf, twilioSignatureValid, twilioStatusOf } from '../../providers/twilio/callbacks';

const URL = 'https://messaging.example.com/callbacks/twilio/6f1c2f0e-3a57-4c1e-9d0b-3f8a8f0e2a11/status';
const TOKEN = '0123456789abcdef0123456789abcdef';

describe('Twilio callbacks', () => {
  it('a status form → its SID, status, vocabulary event and numeric ErrorCode', () => {
    expect(twilioStatusOf({ MessageSid: 'SM1', MessageStatus: 'undelivered', ErrorCode: '63016' })).toEqual({
      messageSid: 'SM1',
      status: 'undelivered',
      event: { type: 'failed', classification: null },
      errorCode: 63016,
    });
    expect(twilioStatusOf({ MessageSid: 'SM2', MessageStatus: 'read' }).event).toEqual({ type: 'open', classification: 'human' });
  });

  it('an intermediate status, or an ErrorCode that is no code → no event, no error code', () => {
    expect(twilioStatusOf({ MessageSid: 'SM1', MessageStatus: 'queued', ErrorCode: '12a' })).toEqual({ messageSid: 'SM1', status: 'queued', event: null, errorCode: null });
    expect(twilioStatusOf({ MessageStatus: ['sent'], ErrorCode: '1234567' })).toEqual({ messageSid: '', status: '', event: null, errorCode: null });
  });

  it('an inbound WhatsApp message → the sender in E.164, its text, media count and SID', () => {
    expect(twilioInboundOf({ From: 'whatsapp:+14155552671', Body: 'hello', NumMedia: '2', MessageSid: 'SM9' })).toEqual({
      from: '+14155552671',
      text: 'hello',
      media: 2,
      providerMessageId: 'SM9',
    });
    expect(twilioInboundOf({ From: 'whatsapp:+14155552671' })).toEqual({ from: '+14155552671', text: null, media: 0, providerMessageId: null });
  });

  it('an inbound message from something that is no phone number → nothing', () => {
    expect(twilioInboundOf({ From: 'whatsapp:ann', Body: 'hello' })).toBeNull();
    expect(twilioInboundOf({})).toBeNull();
  });

  it('a signature made with the account\'s token over the URL and form verifies; any change to them, or no signature, does not', () => {
    const form = { MessageSid: 'SM1', MessageStatus: 'delivered' };
    const signature = twilioSignature(TOKEN, URL, form);
    expect(twilioSignatureValid(TOKEN, signature, URL, form)).toBe(true);
    expect(twilioSignatureValid(TOKEN, signature, URL, { ...form, MessageStatus: 'read' })).toBe(false);
    expect(twilioSignatureValid(TOKEN, signature, URL.replace('/status', '/inbound'), form)).toBe(false);
    expect(twilioSignatureValid('another-token-of-thirty-two-char', signature, URL, form)).toBe(false);
    expect(twilioSignatureValid(TOKEN, '', URL, form)).toBe(false);
  });
});
