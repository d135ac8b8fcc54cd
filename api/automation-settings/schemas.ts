import { z } from 'zod';
import { CHANNELS } from '../../core/identities';
import { parseDuration } from '../../core/journeys/durations';
import { isTimeZone } from '../../core/journeys/local-time';

const TimeZone = z
  .string()
  .max(64)
  .refine(isTimeZone, 'An IANA time zone the service knows, such as Europe/Paris or UTC')
  .describe('An IANA time zone');

const LocalTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'A local time is HH:MM (00:00 to 23:59)');

const QuietHoursSchema = z
  .object({
    start: LocalTime.describe('When quiet hours begin, in the contact\'s time zone; they may run past midnight (21:00 to 08:00)'),
    end: LocalTime.describe('When they end: a message held by them goes out then'),
  })
  .refine((quiet) => quiet.start !== quiet.end, { message: 'start and end must differ', path: ['end'] });

const Window = z
  .union([z.int().min(1), z.string().min(2).max(40)])
  .refine((value) => parseDuration(value) !== null, 'An ISO 8601 duration (P1D, PT12H, P1W) or a number of seconds, at most a year')
  .describe('An ISO 8601 duration (weeks, days, hours, minutes, seconds) or a number of seconds');

const FrequencyCapInput = z.object({
  channel: z.enum([...CHANNELS, 'any']).describe('The channel counted, or any for all channels together'),
  limit: z.int().min(1).max(1000).describe('At most this many marketing messages (campaign and journey) per contact within the window'),
  window: Window,
});

export const SaveAutomationSettingsBody = z
  .object({
    timezone: TimeZone.optional().describe('The workspace\'s zone, for contacts without a valid zone of their own'),
    timezoneAttribute: z.string().min(1).max(64).optional().describe('The contact attribute holding a contact\'s IANA zone'),
    quietHours: QuietHoursSchema.nullable().optional().describe('null: no quiet hours'),
    frequencyCaps: z.array(FrequencyCapInput).max(20).optional().describe('Replaces the caps; [] removes them'),
  })
  .meta({ id: 'SaveAutomationSettings' });

export const AutomationSettingsSchema = z
  .object({
    timezone: z.string(),
    timezoneAttribute: z.string(),
    quietHours: z.object({ start: z.string(), end: z.string() }).nullable(),
    frequencyCaps: z.array(z.object({ channel: z.string(), limit: z.int(), windowSeconds: z.number() })),
  })
  .meta({ id: 'AutomationSettings' });

export type SaveAutomationSettingsInput = z.infer<typeof SaveAutomationSettingsBody>;
export type AutomationSettingsView = z.infer<typeof AutomationSettingsSchema>;
