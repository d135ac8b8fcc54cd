import type { Sequelize } from 'sequelize';
import { isAppError } from '../core/errors';
import { type ChatContent, type RenderedChat, telegramContentOf, whatsAppContentOf } from '../core/message-content';
import { htmlToPlainText } from '../core/templates/plain-text';
import type { Message } from '../db/repositories/messages';
import { findTemplateVersion } from '../db/repositories/templates';
import type { TemplateRenderer } from '../infra/template-renderer';
import { PermanentSendError } from '../core/delivery';

export type ChatChannel = RenderedChat['channel'];

const CONTENT_OF: Record<ChatChannel, (content: unknown) => ChatContent> = { whatsapp: whatsAppContentOf, telegram: telegramContentOf };

/**
 * The text of a chat message: its own text as written (no markup: chat channels show it as plain text),
 * or the template version pinned at acceptance, rendered with the message's variables, whose
 * `channelText` override for this channel wins over the plain text derived from the template's body
 * (core/templates/render.ts). A WhatsApp content template has no text of ours: Twilio renders it.
 */
export function createChatRenderer(db: Sequelize, templates: TemplateRenderer, channel: ChatChannel) {
  return async (message: Message): Promise<RenderedChat> => {
    const content = CONTENT_OF[channel](message.content);
    if (!content.templateVersionId) return { channel, text: content.text ?? null, templateVersionId: null };
    const version = await findTemplateVersion(db, message.workspaceId, content.templateVersionId);
    if (!version) throw new PermanentSendError('the template version of this message no longer exists');
    try {
      const rendered = await templates.render(version, content.variables ?? {});
      const text = rendered.channelText?.[channel] ?? (rendered.html !== null && !rendered.text ? htmlToPlainText(rendered.html) : rendered.text);
      return { channel, text: text || null, templateVersionId: version.id };
    } catch (error) {
      // The same template and variables fail the same way on every retry.
      if (isAppError(error) && error.code === 'template_invalid') throw new PermanentSendError(`template: ${error.message}`);
      throw error;
    }
  };
}
