/**
 * What a contact's mail to an inbox means to its journeys, as the contact event the inbound-mail workflow
 * stores: `email.replied` when the message joined a thread holding a message we sent (the contact answered
 * us), `email.received` when it did not (the contact wrote first). The contact journey shows the mail itself
 * (`email_received`), so these events are not shown there a second time as touches.
 */
export const INBOUND_CONTACT_EVENTS = ['email.replied', 'email.received'] as const;

export type InboundContactEventName = (typeof INBOUND_CONTACT_EVENTS)[number];

/** One received copy of a mail, as the inbound-mail workflow processes it. */
export interface ReceivedCopy {
  inboxMessageId: string;
  /** The mail's Message-ID (bare), or null when it had none. */
  messageIdHeader: string | null;
  /** The raw message in the blob store: one object per workspace per delivery, shared by its inboxes' copies. */
  rawBlobKey: string | null;
}

/**
 * The idempotency key of the contact event of a received mail. One mail to two inboxes of a workspace is two
 * copies (each inbox files and counts its own) but one thing the contact did: the key names the mail, not the
 * copy, so the first copy processed stores the event and the second finds it. The mail is its Message-ID, or
 * without one the delivery's raw object; the contact is in the key, so another sender reusing a Message-ID never
 * takes a contact's event.
 */
export function inboundContactEventKey(contactId: string, copy: ReceivedCopy): string {
  const mail = copy.messageIdHeader ? `id:${copy.messageIdHeader.toLowerCase()}` : copy.rawBlobKey ? `raw:${copy.rawBlobKey}` : `copy:${copy.inboxMessageId}`;
  return `inbound-mail:${contactId}:${mail}`;
}

/** The key events were stored under before one mail made one event (per copy): still read, so they are found. */
export const legacyInboundContactEventKey = (inboxMessageId: string) => `inbound-mail:${inboxMessageId}`;
