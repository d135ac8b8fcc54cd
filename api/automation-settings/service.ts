import type { Sequelize } from 'sequelize';
import type { JourneySettings } from '../../core/journeys/delivery-window';
import { parseDuration } from '../../core/journeys/durations';
import { readJourneySettings, writeJourneySettings } from '../../db/repositories/journey-settings';
import type { SaveAutomationSettingsInput } from './schemas';

/**
 * A workspace's journey settings: quiet hours and frequency caps, which journey messages wait for
 * (never transactional sends), and the zones they are read in. A PUT changes the fields it names.
 */
export function createAutomationSettingsService(db: Sequelize) {
  return {
    get: (workspaceId: string): Promise<JourneySettings> => readJourneySettings(db, workspaceId),

    async save(workspaceId: string, input: SaveAutomationSettingsInput): Promise<JourneySettings> {
      const current = await readJourneySettings(db, workspaceId);
      const settings: JourneySettings = {
        timezone: input.timezone ?? current.timezone,
        timezoneAttribute: input.timezoneAttribute ?? current.timezoneAttribute,
        quietHours: input.quietHours === undefined ? current.quietHours : input.quietHours,
        frequencyCaps: input.frequencyCaps
          // The schema checked each window parses.
          ? input.frequencyCaps.map((cap) => ({ channel: cap.channel, limit: cap.limit, windowMs: parseDuration(cap.window) ?? 0 }))
          : current.frequencyCaps,
      };
      await writeJourneySettings(db, workspaceId, settings);
      return settings;
    },
  };
}

export type AutomationSettingsService = ReturnType<typeof createAutomationSettingsService>;
