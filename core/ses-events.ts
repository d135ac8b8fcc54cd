import { z } from 'zod';
import { parseMailboxes } from './addresses';
import { normaliseEmail } from './identities';

/**
 * SES event notifications (as delivered by SNS) turned into this service's event vocabulary. Both SES
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

/** `data`: what the event's source adds to the stored event (a DSN's status code and diagnostic, an ARF's feedback type). */
export type ProviderEvent =
  | { type: 'delivered'; providerMessageId: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'bounce'; providerMessageId: string; bounceType: 'hard' | 'soft'; detail: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'complaint'; providerMessageId: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'delivery_delayed'; providerMessageId: string; at: Date | null; data?: Record<string, unknown> };

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

/**
 * Splits the recipients a bounce or complaint names into those the message was sent to (to, cc or bcc,
 * stored as formatted mailboxes like `Ann <ann@x.org>`) and the others. Only the first may be suppressed:
 * a mismatched or forged notification must not suppress addresses the message never went to. Addresses
 * compare case-insensitively, domains in their ASCII form.
 */
export function recipientsOfMessage(reported: readonly string[], messageRecipients: readonly string[]): { matched: string[]; foreign: string[] } {
  const sentTo = new Set(messageRecipients.flatMap(comparableAddresses));
  const matched: string[] = [];
  const foreign: string[] = [];
  for (const address of reported) {
    const comparable = comparableAddresses(address);
    (comparable.length > 0 && comparable.every((each) => sentTo.has(each)) ? matched : foreign).push(address);
  }
  return { matched, foreign };
}

function comparableAddresses(text: string): string[] {
  const parsed = parseMailboxes(text);
  if (!parsed.ok) return [];
  return parsed.mailboxes.flatMap((mailbox) => {
    const normalised = normaliseEmail(mailbox.address);
    return normalised.ok ? [normalised.address] : [];
  });
}
