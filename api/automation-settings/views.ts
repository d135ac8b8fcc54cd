import type { JourneySettings } from '../../core/journeys/delivery-window';
import type { AutomationSettingsView } from './schemas';

/** The settings as the API shows them: windows in seconds. */
export function automationSettingsView(settings: JourneySettings): AutomationSettingsView {
  return {
    timezone: settings.timezone,
    timezoneAttribute: settings.timezoneAttribute,
    quietHours: settings.quietHours,
    frequencyCaps: settings.frequencyCaps.map((cap) => ({ channel: cap.channel, limit: cap.limit, windowSeconds: cap.windowMs / 1000 })),
  };
}
