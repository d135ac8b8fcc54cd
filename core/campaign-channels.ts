import type { Channel } from './identities';

/**
 * The channels a campaign tries for each contact, in order: its preferred channel, then its fallback
 * chain (a channel named twice counts once). A contact is sent on the first that reaches it.
 */
export function campaignChannels(channel: Channel, fallbackChain: readonly Channel[]): Channel[] {
  return [...new Set<Channel>([channel, ...fallbackChain])];
}

/** Why a member of a campaign's audience got no message (docs/campaigns.md "Chat channels"). */
export const CAMPAIGN_SKIP_REASONS = {
  /** No channel of the campaign reaches the contact: no address on it, opted out, or suppressed. */
  unreachable: 'no_reachable_identity',
  /** Free-form WhatsApp content, and the contact had not written within 24 hours when its turn came. */
  whatsappWindow: 'outside_whatsapp_window',
} as const;
