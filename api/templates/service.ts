import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { analyseTemplate } from '../../core/templates/analyse';
import { type ChannelText, distinctChannels, sameContent, TEMPLATE_LIMITS, type TemplateContent } from '../../core/templates/content';
import type { RenderedTemplate } from '../../core/templates/render';
import {
  deleteTemplate,
  findTemplate,
  insertTemplate,
  isTemplateNameTaken,
  listTemplates,
  type TemplateDraft,
  type TemplateRecord,
  updateTemplate,
} from '../../db/repositories/templates';
import type { TemplateRenderer } from '../../infra/template-renderer';
import type { CreateTemplateInput, UpdateTemplateInput } from './schemas';

type BodyInput = CreateTemplateInput['body'];

/** A blocks body may arrive as the array itself; it is kept as the JSON text the API returns. */
function bodyText(body: BodyInput): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  if (text.length > TEMPLATE_LIMITS.body.max) {
    throw AppError.validation({ formErrors: [], fieldErrors: { body: [`must be at most ${TEMPLATE_LIMITS.body.max} characters`] } });
  }
  return text;
}

/** An override object without overrides says nothing: it is kept as null. */
function channelTextOf(channelText: ChannelText | null | undefined): ChannelText | null {
  return channelText && Object.keys(channelText).length ? channelText : null;
}

/** Checks content (422 template_invalid pointing at the line) and derives its variables. */
function draftOf(content: TemplateContent): TemplateDraft {
  return { ...content, ...analyseTemplate(content) };
}

function nameTaken(name: string): AppError {
  return new AppError('conflict', `A template named "${name}" already exists in this workspace`);
}

export interface TemplateServiceDeps {
  db: Sequelize;
  templateRenderer: TemplateRenderer;
}

export async function requireTemplate({ db }: TemplateServiceDeps, workspaceId: string, templateId: string): Promise<TemplateRecord> {
  const template = await findTemplate(db, workspaceId, templateId);
  if (!template) throw AppError.notFound('Template');
  return template;
}

export async function createTemplate({ db }: TemplateServiceDeps, workspaceId: string, input: CreateTemplateInput): Promise<TemplateRecord> {
  const draft = draftOf({
    channels: distinctChannels(input.channels),
    format: input.format,
    subject: input.subject ?? null,
    body: bodyText(input.body),
    channelText: channelTextOf(input.channelText),
  });
  try {
    return await insertTemplate(db, workspaceId, input.name, draft);
  } catch (error) {
    if (isTemplateNameTaken(error)) throw nameTaken(input.name);
    throw error;
  }
}

/** Absent fields stay; a content change makes a new version, a rename alone does not. */
export async function changeTemplate({ db }: TemplateServiceDeps, workspaceId: string, templateId: string, input: UpdateTemplateInput): Promise<TemplateRecord> {
  let updated: TemplateRecord | null;
  try {
    updated = await updateTemplate(db, workspaceId, templateId, (current) => {
      const content: TemplateContent = {
        channels: input.channels ? distinctChannels(input.channels) : current.channels,
        format: input.format ?? current.format,
        subject: input.subject === undefined ? current.subject : input.subject,
        body: input.body === undefined ? current.body : bodyText(input.body),
        channelText: input.channelText === undefined ? current.channelText : channelTextOf(input.channelText),
      };
      return { name: input.name, draft: sameContent(content, current) ? undefined : draftOf(content) };
    });
  } catch (error) {
    if (isTemplateNameTaken(error)) throw nameTaken(input.name ?? '');
    throw error;
  }
  if (!updated) throw AppError.notFound('Template');
  return updated;
}

/**
 * The spec: 409 while a campaign still uses the template; likewise while an active or paused automation
 * sends with it, or its enrollments would skip that message.
 */
export async function removeTemplate({ db }: TemplateServiceDeps, workspaceId: string, templateId: string): Promise<void> {
  const outcome = await deleteTemplate(db, workspaceId, templateId);
  if (outcome === 'not_found') throw AppError.notFound('Template');
  if (outcome === 'deleted') return;
  if (outcome.inUseBy === 'campaign') throw new AppError('conflict', 'A campaign still uses this template');
  throw new AppError('conflict', `The automation "${outcome.automation.name}" (${outcome.automation.id}) sends with this template: change or archive it first`);
}

/** Renders on the render threads, under the budget a send has, so a heavy template never stalls this process. */
export async function previewTemplate(deps: TemplateServiceDeps, workspaceId: string, templateId: string, input: { variables: Record<string, unknown>; strict: boolean }): Promise<RenderedTemplate> {
  const template = await requireTemplate(deps, workspaceId, templateId);
  return deps.templateRenderer.render({ ...template, id: template.versionId }, input.variables, { strict: input.strict });
}

export function createTemplateService(deps: TemplateServiceDeps) {
  return {
    list: (workspaceId: string, page: { limit: number; offset: number }) => listTemplates(deps.db, workspaceId, page),
    get: (workspaceId: string, templateId: string) => requireTemplate(deps, workspaceId, templateId),
    create: (workspaceId: string, input: CreateTemplateInput) => createTemplate(deps, workspaceId, input),
    update: (workspaceId: string, templateId: string, input: UpdateTemplateInput) => changeTemplate(deps, workspaceId, templateId, input),
    remove: (workspaceId: string, templateId: string) => removeTemplate(deps, workspaceId, templateId),
    preview: (workspaceId: string, templateId: string, input: { variables: Record<string, unknown>; strict: boolean }) => previewTemplate(deps, workspaceId, templateId, input),
  };
}

export type TemplateService = ReturnType<typeof createTemplateService>;
