import type { Sequelize } from 'sequelize';
import { isAppError } from '../core/errors';
import { type ChatContent, personalized, type RenderedChat, telegramContentOf, whatsAppContentOf } from '../core/message-content';
import type { TemplateVersionContent } from '../core/templates/content';
import type { RenderedTemplate } from '../core/templates/render';
import { htmlToPlainText } from '../core/templates/plain-text';
import type { Message } from '../db/repositories/messages';
import { findTemplateVersion } from '../db/repositories/templates';
import type { TemplateRenderer } from '../infra/template-renderer';
import { PermanentSendError } from '../core/delivery';

export type ChatChannel = RenderedChat['channel'];

const CONTENT_OF: Record<ChatChannel, (content: unknown) => ChatContent> = { whatsapp: whatsAppContentOf, telegram: telegramContentOf };

/**
 * The text of a chat message: its own text (no markup: chat channels show it as plain text), rendered as
 * Liquid with the message's variables when it is personalized (a campaign's contact, as email does:
 * core/message-content.ts `personalized`) and otherwise as written; or the template version pinned at
 * acceptance, rendered with the message's variables, whose `channelText` override for this channel wins over the plain text derived from the template's body
 * (core/templates/render.ts). A WhatsApp content template has no text of ours: Twilio renders it.
 */
export function createChatRenderer(db: Sequelize, templates: TemplateRenderer, channel: ChatChannel) {
  return async (message: Message): Promise<RenderedChat> => {
    const content = CONTENT_OF[channel](message.content);
    if (!content.templateVersionId) {
      if (!content.text || !personalized(message.kind, content)) return { channel, text: content.text ?? null, templateVersionId: null };
      const rendered = await renderOrFail(templates, inlineText(channel, content.text), content.variables ?? {});
      return { channel, text: rendered.text || null, templateVersionId: null };
    }
    const version = await findTemplateVersion(db, message.workspaceId, content.templateVersionId);
    if (!version) throw new PermanentSendError('the template version of this message no longer exists');
    const rendered = await renderOrFail(templates, version, content.variables ?? {});
    const text = rendered.channelText?.[channel] ?? (rendered.html !== null && !rendered.text ? htmlToPlainText(rendered.html) : rendered.text);
    return { channel, text: text || null, templateVersionId: version.id };
  };
}

/** A message's own text rendered through the template pool; inline content has no version, the id is only echoed back. */
function inlineText(channel: ChatChannel, body: string): TemplateVersionContent {
  return { id: 'inline', channels: [channel], format: 'text', subject: null, body, channelText: null };
}

async function renderOrFail(templates: TemplateRenderer, version: TemplateVersionContent, variables: Record<string, unknown>): Promise<RenderedTemplate> {
  try {
    return await templates.render(version, variables);
  } catch (error) {
    // The same template and variables fail the same way on every retry.
    if (isAppError(error) && error.code === 'template_invalid') throw new PermanentSendError(`template: ${error.message}`);
    throw error;
  }
}
