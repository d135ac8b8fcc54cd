import type { Sequelize } from 'sequelize';
import { isAppError } from '../core/errors';
import { emailContentOf } from '../core/message-content';
import { htmlToPlainText } from '../core/templates/plain-text';
import type { RenderedTemplate } from '../core/templates/render';
import type { Message, RenderedEmail } from '../db/repositories/messages';
import { findTemplateVersion } from '../db/repositories/templates';
import type { TemplateRenderer } from '../services/template-renderer';
import { PermanentSendError } from './channels/email-channel';

/**
 * What a message says, from its own html/text or from the template version pinned when it was accepted.
 * A subject given with the send wins over the template's. Without a text part, one is derived from the
 * HTML; text alone stays a text-only email. (Tracking and UTM tagging plug in here with their issue.)
 */
export function createEmailRenderer(db: Sequelize, templates: TemplateRenderer) {
  return async (message: Message): Promise<RenderedEmail> => {
    const content = emailContentOf(message.content);
    if (content.templateVersionId) {
      const version = await findTemplateVersion(db, message.workspaceId, content.templateVersionId);
      if (!version) throw new PermanentSendError('the template version of this message no longer exists');
      let rendered: RenderedTemplate;
      try {
        rendered = await templates.render(version, content.variables ?? {});
      } catch (error) {
        // The same template and variables fail the same way on every retry (a render over its budget too).
        if (isAppError(error) && error.code === 'template_invalid') throw new PermanentSendError(`template: ${error.message}`);
        throw error;
      }
      const subject = message.subject ?? rendered.subject;
      if (!subject) throw new PermanentSendError('neither the send nor its template gives a subject');
      return {
        subject,
        html: rendered.html ?? undefined,
        text: rendered.text,
        headers: {},
        templateVersionId: version.id,
      };
    }
    const html = content.html;
    const text = content.text ?? (html !== undefined ? htmlToPlainText(html) : undefined);
    return { subject: message.subject ?? '', html, text, headers: {}, templateVersionId: null };
  };
}
