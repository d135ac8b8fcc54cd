import { z } from 'zod';
import type { ProviderEvent } from '../../core/delivery';

/**
 * SES event notifications (as delivered by SNS) turned into the delivery vocabulary (core/delivery.ts). Both SES
 * formats exist in the wild: identity notifications say `notificationType`, configuration-set event
 * publishing says `eventType`; the payload fields are the same.
 */
const Recipient = z.object({ emailAddress: z.string() });

const SesNotification = z.object({
  notificationType: z.string().optional(),
  eventType: z.string().optional(),
  mail: z.object({ messageId: z.string(), timestamp: z.string().optional() }),
  bounce: z
    .object({ bounceType: z.string(), bounceSubType: z.string().optional(), bouncedRecipients: z.array(Recipient), timestamp: z.string().optional() })
    .optional(),
  complaint: z.object({ complainedRecipients: z.array(Recipient), timestamp: z.string().optional() }).optional(),
  delivery: z.object({ recipients: z.array(z.string()), timestamp: z.string().optional() }).optional(),
});

const when = (value: string | undefined) => (value ? new Date(value) : null);

/** Null for notifications this service does not act on (sends, opens tracked by SES, rendering failures). */
export function parseSesNotification(message: unknown): ProviderEvent | null {
  const parsed = SesNotification.safeParse(message);
  if (!parsed.success) return null;
  const notification = parsed.data;
  const providerMessageId = notification.mail.messageId;
  switch (notification.notificationType ?? notification.eventType) {
    case 'Delivery':
      return { type: 'delivered', providerMessageId, recipients: notification.delivery?.recipients ?? [], at: when(notification.delivery?.timestamp) };
    case 'Bounce': {
      const bounce = notification.bounce;
      if (!bounce) return null;
      // Only a Permanent bounce is final; Transient and Undetermined may deliver on a later try.
      const hard = bounce.bounceType === 'Permanent';
      return {
        type: 'bounce',
        providerMessageId,
        bounceType: hard ? 'hard' : 'soft',
        detail: [bounce.bounceType, bounce.bounceSubType].filter(Boolean).join('/'),
        recipients: bounce.bouncedRecipients.map((recipient) => recipient.emailAddress),
        at: when(bounce.timestamp),
      };
    }
    case 'Complaint':
      return {
        type: 'complaint',
        providerMessageId,
        recipients: notification.complaint?.complainedRecipients.map((recipient) => recipient.emailAddress) ?? [],
        at: when(notification.complaint?.timestamp),
      };
    case 'DeliveryDelay':
      return { type: 'delivery_delayed', providerMessageId, at: null };
    default:
      return null;
  }
}
