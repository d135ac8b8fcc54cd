import { z } from 'zod';
import { HTTPS_URL_PATTERN, text } from '../../http/formats';

/** Goal ids a connection names; more is a misconfiguration, not a site. */
export const MAX_GOAL_NAMES = 500;

export const SaveAnalyticsConnectionBody = z
  .object({
    provider: z.literal('matomo').describe('The analytics product: Matomo (self-hosted or Matomo Cloud)'),
    baseUrl: z
      .string()
      .max(2000)
      .meta({ pattern: HTTPS_URL_PATTERN })
      .describe('The Matomo installation, such as https://stats.example.com/ (https, public addresses only)'),
    siteId: z.int().min(1).max(2_147_483_647).describe('The Matomo site (idSite) whose conversions are read'),
    tokenAuth: z.string().min(1).max(200).describe('A Matomo auth token with view access to the site; checked with Matomo, stored encrypted, never shown again'),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/, 'A three-letter ISO 4217 code')
      .optional()
      .describe('Currency of revenue for visits that do not carry their site\'s (default: the site\'s currency in Matomo)'),
    goalNames: z
      .record(z.string().regex(/^[0-9]{1,9}$/, 'A Matomo goal id'), text(200))
      .refine((names) => Object.keys(names).length <= MAX_GOAL_NAMES, `At most ${MAX_GOAL_NAMES} goals`)
      .optional()
      .describe('Conversion names by Matomo goal id ({ "1": "signup" }); other goals keep their Matomo name'),
  })
  .meta({ id: 'SaveAnalyticsConnection' });

const LastSync = z.object({
  status: z.enum(['running', 'succeeded', 'failed']),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  imported: z.int().describe('Conversions newly recorded by this sync (so far, while running)'),
  error: z.string().nullable().describe('Why the sync failed, as Matomo or the connection said'),
});

export const AnalyticsConnectionSchema = z
  .discriminatedUnion('configured', [
    z.object({
      configured: z.literal(true),
      provider: z.literal('matomo'),
      baseUrl: z.string(),
      siteId: z.int(),
      currency: z.string().nullable(),
      goalNames: z.record(z.string(), z.string()),
      syncCursor: z.string().nullable().describe('The last action time of the latest visit synced; the next sync reads from an hour before it'),
      lastSync: LastSync.nullable(),
    }),
    z.object({ configured: z.literal(false) }),
  ])
  .meta({ id: 'AnalyticsConnection' });

export type AnalyticsConnectionView = z.infer<typeof AnalyticsConnectionSchema>;

export const AnalyticsSyncBody = z
  .object({
    attachmentId: z.uuid().optional().describe('An uploaded CSV of conversions (POST /attachments) to import instead of reading the connection'),
    from: z.iso.datetime({ offset: true }).optional().describe('Read conversions from this time (Matomo default: an hour before the cursor, or 30 days ago on a first sync)'),
    until: z.iso.datetime({ offset: true }).optional().describe('Read conversions up to this time (default: now)'),
  })
  .refine((body) => !body.from || !body.until || new Date(body.from) <= new Date(body.until), { message: 'from must not be after until', path: ['until'] })
  .meta({ id: 'AnalyticsSyncRequest' });

export const AnalyticsSyncResultSchema = z.object({ imported: z.int().describe('Conversions newly recorded (0 when every row was already recorded)') }).meta({ id: 'AnalyticsSyncResult' });

export const AnalyticsSyncRunningSchema = z
  .object({
    imported: z.int().describe('Conversions recorded so far'),
    status: z.literal('running'),
    syncId: z.string().describe('The sync\'s id (its status URL ends with it)'),
    statusUrl: z.string().describe('GET it for the sync\'s status; it reports imported when the sync is done (also in the Location header)'),
  })
  .meta({ id: 'AnalyticsSyncRunning' });

export const AnalyticsSyncParams = z.object({ syncId: z.string().max(200).describe('The syncId a 202 of POST /integrations/analytics/sync answered') });

export const AnalyticsSyncStatusSchema = z
  .object({
    syncId: z.string(),
    status: z.enum(['running', 'succeeded', 'failed']),
    imported: z.int().nullable().describe('Conversions newly recorded: so far while running, in all when succeeded; null when the count cannot be read right now (no worker answered in 2 s)'),
    error: z.string().nullable().describe('Why the sync failed (Matomo\'s refusal or outage, a CSV row that breaks a rule)'),
  })
  .meta({ id: 'AnalyticsSyncStatus' });
