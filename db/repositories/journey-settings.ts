import { QueryTypes, type Sequelize } from 'sequelize';
import { DEFAULT_JOURNEY_SETTINGS, type FrequencyCap, type JourneySettings, type QuietHours } from '../../core/journeys/delivery-window';

/**
 * A workspace's journey settings: its zone (`workspaces.timezone`, which campaigns sent at a local time
 * read too), and from journey_settings (0020) the contact attribute holding a contact's own zone, quiet
 * hours and frequency caps. A workspace that never set these has the defaults.
 */

interface SettingsRow {
  timezone: string;
  /** Null with the rest when the workspace never saved journey settings. */
  timezone_attribute: string | null;
  quiet_hours: QuietHours | null;
  frequency_caps: FrequencyCap[] | null;
}

export async function readJourneySettings(db: Sequelize, workspaceId: string): Promise<JourneySettings> {
  const [row] = await db.query<SettingsRow>(
    `SELECT w.timezone, s.timezone_attribute, s.quiet_hours, s.frequency_caps
     FROM workspaces w LEFT JOIN journey_settings s ON s.workspace_id = w.id WHERE w.id = $1`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  if (!row) return DEFAULT_JOURNEY_SETTINGS;
  return {
    timezone: row.timezone,
    timezoneAttribute: row.timezone_attribute ?? DEFAULT_JOURNEY_SETTINGS.timezoneAttribute,
    quietHours: row.quiet_hours,
    frequencyCaps: row.frequency_caps ?? DEFAULT_JOURNEY_SETTINGS.frequencyCaps,
  };
}

/** Stores the whole settings of a workspace (the service merges a partial change into the current ones). */
export async function writeJourneySettings(db: Sequelize, workspaceId: string, settings: JourneySettings): Promise<void> {
  await db.query(
    `WITH zone AS (UPDATE workspaces SET timezone = $2 WHERE id = $1)
     INSERT INTO journey_settings (workspace_id, timezone_attribute, quiet_hours, frequency_caps)
     VALUES ($1, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (workspace_id) DO UPDATE SET timezone_attribute = EXCLUDED.timezone_attribute,
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
