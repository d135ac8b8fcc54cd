import { InputErrorSchema } from '../http/openapi';
import { ok, type RouteTable } from '../http/route';
import { AutomationSettingsSchema, SaveAutomationSettingsBody } from './schemas';
import type { AutomationSettingsService } from './service';
import { automationSettingsView } from './views';

export function automationSettingsRoutes(routes: RouteTable, settings: AutomationSettingsService): void {
  routes.get('/automation-settings', 'automations:read', {
    summary: 'The workspace\'s journey settings: time zone, quiet hours and frequency caps (defaults when never set)',
    responses: { 200: { description: 'The settings', schema: AutomationSettingsSchema } },
    handle: async ({ principal }) => ok(automationSettingsView(await settings.get(principal.workspaceId))),
  });

  routes.put('/automation-settings', 'automations:write', {
    summary: 'Change the journey settings; fields left out stay as they are. A journey message that would break them waits',
    body: SaveAutomationSettingsBody,
    responses: {
      200: { description: 'The settings now', schema: AutomationSettingsSchema },
      422: { description: 'Invalid fields: an unknown time zone, a bad HH:MM, a cap window that is not a duration', schema: InputErrorSchema },
    },
    handle: async ({ principal, body }) => ok(automationSettingsView(await settings.save(principal.workspaceId, body))),
  });
}
