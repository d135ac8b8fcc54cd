/**
 * Twilio's message statuses (status callbacks) in this service's event vocabulary (decisions: Unified
 * messages). Intermediate statuses (`queued`, `accepted`, `sending`, …) are not events and map to null.
 * WhatsApp reports a read receipt, which is a person opening the message, hence a human open.
 */
export type TwilioStatusEvent = { type: 'sent' | 'delivered' | 'failed'; classification: null } | { type: 'open'; classification: 'human' };

export function twilioStatusEvent(status: string): TwilioStatusEvent | null {
  switch (status) {
    case 'sent':
      return { type: 'sent', classification: null };
    case 'delivered':
      return { type: 'delivered', classification: null };
    case 'read':
      return { type: 'open', classification: 'human' };
    case 'failed':
    case 'undelivered':
      return { type: 'failed', classification: null };
    default:
      return null;
  }
}
