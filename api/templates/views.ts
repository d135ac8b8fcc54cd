import type { z } from 'zod';
import { primaryChannel } from '../../core/templates/content';
import type { RenderedTemplate } from '../../core/templates/render';
import type { TemplateRecord, TemplateSummaryRecord } from '../../db/repositories/templates';
import type { TemplatePreviewSchema, TemplateSchema, TemplateSummarySchema } from './schemas';

export function templateSummaryView(template: TemplateSummaryRecord): z.infer<typeof TemplateSummarySchema> {
  return {
    id: template.id,
    name: template.name,
    channel: primaryChannel(template.channels),
    channels: template.channels,
    format: template.format,
    subject: template.subject,
    variables: template.variables,
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
  };
}

export function templateView(template: TemplateRecord): z.infer<typeof TemplateSchema> {
  return { ...templateSummaryView(template), body: template.body, channelText: template.channelText };
}

export function templatePreviewView(rendered: RenderedTemplate): z.infer<typeof TemplatePreviewSchema> {
  return { subject: rendered.subject, html: rendered.html, text: rendered.text, channelText: rendered.channelText };
}
