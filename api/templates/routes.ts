import { created, ok, type RouteTable } from '../http/route';
import {
  CreateTemplateBody,
  RenderTemplateBody,
  TemplateDeletedSchema,
  TemplateListQuery,
  TemplateListSchema,
  TemplateParams,
  TemplatePreviewSchema,
  TemplateSchema,
  UpdateTemplateBody,
} from './schemas';
import type { TemplateService } from './service';
import { templatePreviewView, templateSummaryView, templateView } from './views';

const INVALID = 'Invalid input (`validation_error`), or content that does not parse (`template_invalid` with field, line and column)';

export function templateRoutes(routes: RouteTable, templates: TemplateService): void {
  routes.get('/templates', 'templates:read', {
    summary: 'List templates, newest first',
    query: TemplateListQuery,
    responses: { 200: { description: 'Templates without their content', schema: TemplateListSchema } },
    handle: async ({ principal, query }) =>
      ok({ templates: (await templates.list(principal.workspaceId, query)).map(templateSummaryView) }),
  });

  routes.post('/templates', 'templates:write', {
    summary: 'Create a template (its id or name is a send\'s templateId)',
    body: CreateTemplateBody,
    responses: {
      201: { description: 'Created', schema: TemplateSchema },
      409: { description: 'A template of that name already exists (names are case-insensitive)' },
      422: { description: INVALID },
    },
    handle: async ({ principal, body }) => created(templateView(await templates.create(principal.workspaceId, body))),
  });

  routes.get('/templates/:id', 'templates:read', {
    summary: 'A template with its content',
    params: TemplateParams,
    responses: { 200: { description: 'The template', schema: TemplateSchema }, 404: { description: 'No such template' } },
    handle: async ({ principal, params }) => ok(templateView(await templates.get(principal.workspaceId, params.id))),
  });

  routes.patch('/templates/:id', 'templates:write', {
    summary: 'Change a template; absent fields stay, and a content change makes a new version',
    params: TemplateParams,
    body: UpdateTemplateBody,
    responses: {
      200: { description: 'The template as it now is', schema: TemplateSchema },
      404: { description: 'No such template' },
      409: { description: 'Another template has that name' },
      422: { description: INVALID },
    },
    handle: async ({ principal, params, body }) => ok(templateView(await templates.update(principal.workspaceId, params.id, body))),
  });

  routes.delete('/templates/:id', 'templates:write', {
    summary: 'Delete a template; messages already rendered from it keep their version',
    params: TemplateParams,
    responses: {
      200: { description: 'Deleted', schema: TemplateDeletedSchema },
      404: { description: 'No such template' },
      409: { description: 'A campaign, or an active or paused automation, still uses the template' },
    },
    handle: async ({ principal, params }) => {
      await templates.remove(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });

  routes.post('/templates/:id/render', 'templates:read', {
    cost: 'heavy',
    summary: 'Preview: render the template with variables, without sending',
    params: TemplateParams,
    body: RenderTemplateBody,
    responses: {
      200: { description: 'Subject, HTML, plain text and chat texts', schema: TemplatePreviewSchema },
      404: { description: 'No such template' },
      422: { description: 'Rendering failed (under strict, a missing variable): `template_invalid` with the line' },
    },
    handle: async ({ principal, params, body }) =>
      ok(templatePreviewView(await templates.preview(principal.workspaceId, params.id, body))),
  });
}
