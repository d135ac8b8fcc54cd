import { QueryTypes, type Sequelize } from 'sequelize';
import { DEFAULT_JOURNEY_SETTINGS, type FrequencyCap, type JourneySettings, type QuietHours } from '../../core/journeys/delivery-window';

/**
 * A workspace's journey settings (journey_settings, 0020): its zone, the contact attribute holding a
 * contact's own zone, quiet hours and frequency caps. A workspace that never set them has the defaults.
 */

interface SettingsRow {
  timezone: string;
  timezone_attribute: string;
  quiet_hours: QuietHours | null;
  frequency_caps: FrequencyCap[];
}

export async function readJourneySettings(db: Sequelize, workspaceId: string): Promise<JourneySettings> {
  const [row] = await db.query<SettingsRow>(
    'SELECT timezone, timezone_attribute, quiet_hours, frequency_caps FROM journey_settings WHERE workspace_id = $1',
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  if (!row) return DEFAULT_JOURNEY_SETTINGS;
  return { timezone: row.timezone, timezoneAttribute: row.timezone_attribute, quietHours: row.quiet_hours, frequencyCaps: row.frequency_caps };
}

/** Stores the whole settings of a workspace (the service merges a partial change into the current ones). */
export async function writeJourneySettings(db: Sequelize, workspaceId: string, settings: JourneySettings): Promise<void> {
  await db.query(
    `INSERT INTO journey_settings (workspace_id, timezone, timezone_attribute, quiet_hours, frequency_caps)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (workspace_id) DO UPDATE SET timezone = EXCLUDED.timezone, timezone_attribute = EXCLUDED.timezone_attribute,
       quiet_hours = EXCLUDED.quiet_hours, frequency_caps = EXCLUDED.frequency_caps, updated_at = now()`,
    {
      bind: [
        workspaceId,
        settings.timezone,
        settings.timezoneAttribute,
        settings.quietHours === null ? null : JSON.stringify(settings.quietHours),
        JSON.stringify(settings.frequencyCaps),
      ],
    },
  );
}
