import { created, ok, type RouteTable } from '../http/route';
import { CreateEmailRuleBody, EmailRuleEnvelopeSchema, EmailRuleListSchema, EmailRuleParams } from './schemas';
import type { EmailRuleService } from './service';
import { emailRuleView } from './views';

export function emailRuleRoutes(routes: RouteTable, rules: EmailRuleService): void {
  routes.get('/email-rules', 'inbox:read', {
    summary: 'The workspace\'s allow and block rules for inbound mail, newest first',
    responses: { 200: { description: 'Rules', schema: EmailRuleListSchema } },
    handle: async ({ principal }) => ok({ rules: (await rules.list(principal.workspaceId)).map(emailRuleView) }),
  });

  routes.post('/email-rules', 'inbox:write', {
    summary: 'Add an allow or block rule; the SMTP listener applies it to the next mail',
    body: CreateEmailRuleBody,
    responses: {
      201: { description: 'Created', schema: EmailRuleEnvelopeSchema },
      409: { description: 'conflict: the same rule exists (its id in the body), or the workspace has 1,000 rules' },
      422: { description: 'Invalid input, or a value that is not an address or a domain name' },
    },
    handle: async ({ principal, body }) => created({ rule: emailRuleView(await rules.create(principal.workspaceId, body)) }),
  });

  routes.delete('/email-rules/:id', 'inbox:write', {
    summary: 'Delete a rule',
    params: EmailRuleParams,
    responses: { 200: { description: 'The deleted rule', schema: EmailRuleEnvelopeSchema }, 404: { description: 'No such rule in this workspace' } },
    handle: async ({ principal, params }) => ok({ rule: emailRuleView(await rules.remove(principal.workspaceId, params.id)) }),
  });
}
