/**
 * What a contact's mail to an inbox means to its journeys, as the contact event the inbound-mail workflow
 * stores: `email.replied` when the message joined a thread holding a message we sent (the contact answered
 * us), `email.received` when it did not (the contact wrote first). The contact journey shows the mail itself
 * (`email_received`), so these events are not shown there a second time as touches.
 */
export const INBOUND_CONTACT_EVENTS = ['email.replied', 'email.received'] as const;

export type InboundContactEventName = (typeof INBOUND_CONTACT_EVENTS)[number];
