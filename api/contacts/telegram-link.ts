import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import type { TelegramLinkTokens } from '../../core/telegram-link-token';
import { findContact } from '../../db/repositories/contacts';
import { findTelegramIntegration } from '../../db/repositories/telegram';

/** How long a link works: long enough for an emailed or shown link to be used, short enough to expire. */
export const TELEGRAM_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export const TelegramLinkSchema = z
  .object({
    url: z.url().describe('https://t.me/<bot>?start=<token>: opening it and pressing Start links the chat to the contact'),
    token: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).describe('The start parameter, for apps that build the link themselves'),
    botUsername: z.string(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'TelegramLink' });

export type TelegramLink = z.infer<typeof TelegramLinkSchema>;

/**
 * The deep link that verifies a contact's Telegram identity (docs/telegram.md), as Customer.io's and
 * Novu's chat connections work: the app shows it to the signed-in person, who opens it in Telegram and
 * presses Start; the bot's update then carries `/start <token>` from their chat.
 */
export async function telegramLink(db: Sequelize, tokens: TelegramLinkTokens, workspaceId: string, contactId: string, now = new Date()): Promise<TelegramLink> {
  // The contact first: another workspace's contact is answered as missing, whatever this workspace has.
  if (!(await findContact(db, workspaceId, contactId))) throw AppError.notFound('Contact');
  const integration = await findTelegramIntegration(db, workspaceId);
  if (!integration) throw new AppError('conflict', 'The workspace has no Telegram bot (PUT /integrations/telegram)');
  const expiresAt = new Date(now.getTime() + TELEGRAM_LINK_TTL_MS);
  const token = tokens.sign({ workspaceId, contactId, expiresAt });
  return { url: `https://t.me/${integration.botUsername}?start=${token}`, token, botUsername: integration.botUsername, expiresAt: expiresAt.toISOString() };
}
