import { CHANNELS, type Channel, type Consent } from './identities';

/** What a contact's identity says about reaching it (contact_identities). */
export interface ReachableIdentity {
  channel: Channel;
  address: string;
  consent: Consent;
  verified: boolean;
  isPrimary: boolean;
}

/**
 * The identity a message to a contact goes to when the send names no channel (or no address): the
 * contact's primary identity that is verified and opted in, on the channel given, else on the first
 * channel in the service's order (email, whatsapp, telegram) that has one. Null when none qualifies.
 */
export function pickIdentity(identities: readonly ReachableIdentity[], channel?: Channel): ReachableIdentity | null {
  const usable = identities.filter((identity) => identity.isPrimary && identity.verified && identity.consent === 'opted_in');
  for (const candidate of channel ? [channel] : CHANNELS) {
    const found = usable.find((identity) => identity.channel === candidate);
    if (found) return found;
  }
  return null;
}

/**
 * The identity a marketing message (a journey's) goes to on one channel, by the rules campaigns follow:
 * email reaches the primary address unless it is opted out (contacts imported without a declared consent
 * are the usual case, docs/campaigns.md); WhatsApp and Telegram need a primary identity that is verified
 * and opted in, as their providers' rules for promotional messages do.
 */
export function marketingIdentity(identities: readonly ReachableIdentity[], channel: Channel): ReachableIdentity | null {
  if (channel !== 'email') return pickIdentity(identities, channel);
  return identities.find((identity) => identity.channel === 'email' && identity.isPrimary && identity.consent !== 'opted_out') ?? null;
}

/**
 * What each chat channel takes in one message: Telegram's sendMessage text is at most 4,096 characters;
 * Twilio takes a WhatsApp body of up to 1,600 and one media file per message.
 */
export const CHAT_LIMITS = {
  whatsapp: { textChars: 1_600, attachments: 1 },
  telegram: { textChars: 4_096, attachments: 10 },
} as const;

export type ChatChannelName = keyof typeof CHAT_LIMITS;

export function isChatChannel(channel: Channel): channel is ChatChannelName {
  return channel === 'whatsapp' || channel === 'telegram';
}
