import { ok, type RouteTable } from '../../http/route';
import { SaveTwilioIntegrationBody, TwilioIntegrationSchema } from './schemas';
import type { TwilioIntegrationService } from './service';
import { twilioIntegrationView } from './views';

export function twilioIntegrationRoutes(routes: RouteTable, twilio: TwilioIntegrationService): void {
  routes.put('/integrations/twilio', 'integrations:write', {
    summary: 'Save the workspace\'s Twilio account for WhatsApp (checked against Twilio; the token is stored encrypted)',
    body: SaveTwilioIntegrationBody,
    responses: {
      200: { description: 'Saved; the non-secret fields', schema: TwilioIntegrationSchema },
      422: { description: 'Invalid input, a sender that is not an E.164 number, or credentials Twilio refuses (named `authToken`)' },
      503: { description: 'Twilio could not be asked; try again' },
    },
    handle: async ({ principal, body }) => ok(twilioIntegrationView(await twilio.save(principal.workspaceId, body))),
  });

  routes.get('/integrations/twilio', 'integrations:write', {
    summary: 'Whether the workspace has a Twilio account, with its non-secret fields (never the token)',
    responses: { 200: { description: 'The integration, or `{ configured: false }`', schema: TwilioIntegrationSchema } },
    handle: async ({ principal }) => ok(twilioIntegrationView(await twilio.get(principal.workspaceId))),
  });

  routes.delete('/integrations/twilio', 'integrations:write', {
    summary: 'Remove the workspace\'s Twilio account; WhatsApp sends fail until one is saved again',
    responses: {
      200: { description: 'Removed', schema: TwilioIntegrationSchema },
      404: { description: 'No Twilio account was saved' },
    },
    handle: async ({ principal }) => {
      await twilio.remove(principal.workspaceId);
      return ok(twilioIntegrationView(null));
    },
  });
}
