import type { Sequelize } from 'sequelize';
import { parseMailboxes } from '../../core/addresses';
import type { UnsubscribeClaims, UnsubscribeTokens } from '../../core/unsubscribe-token';
import { findEmailRecipients, recordUnsubscribe } from '../../db/repositories/unsubscribes';

/** The `to` addresses of a message, out of their formatted mailboxes (`Ann <ann@x>`). */
function addressesOf(formatted: readonly string[]): string[] {
  return formatted.flatMap((mailbox) => {
    const parsed = parseMailboxes(mailbox);
    return parsed.ok ? parsed.mailboxes.map((found) => found.address) : [];
  });
}

/**
 * The public unsubscribe link: a genuine token names a message of a workspace and, through its MAC, one of
 * that message's recipients. Anything else (forged, altered, a message since deleted) is simply not a
 * link, so no answer says more than the token's own message would.
 */
export function createUnsubscribeService(db: Sequelize, tokens: UnsubscribeTokens) {
  async function recipientOf(token: string): Promise<UnsubscribeClaims | null> {
    const link = tokens.read(token);
    if (!link) return null;
    const to = await findEmailRecipients(db, link.workspaceId, link.messageId);
    const address = to && link.recipient(addressesOf(to));
    return address ? { workspaceId: link.workspaceId, messageId: link.messageId, address } : null;
  }

  return {
    /** Whom the link speaks for, changing nothing (GET: mail scanners follow links). */
    recipientOf,

    /** Unsubscribes the link's recipient (db/repositories/unsubscribes.ts); null when it is not a link. */
    async unsubscribe(token: string): Promise<{ recipient: UnsubscribeClaims; first: boolean } | null> {
      const recipient = await recipientOf(token);
      if (!recipient) return null;
      const outcome = await recordUnsubscribe(db, recipient.workspaceId, recipient.messageId, recipient.address);
      return outcome === 'unknown-message' ? null : { recipient, first: outcome === 'unsubscribed' };
    },
  };
}

export type UnsubscribeService = ReturnType<typeof createUnsubscribeService>;
