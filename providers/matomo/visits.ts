import { normaliseEmail } from '../../core/identities';
import { type AnalyticsConversion, type ContactRef, centsOf, currencyOf, type UtmParameters } from '../../core/analytics/connector';

/**
 * The conversions in a page of Matomo's `Live.getLastVisitsDetails` (JSON). Each visit carries its
 * `actionDetails`, among them `goal` conversions (goalId, goalName, revenue, timestamp) and
 * `ecommerceOrder`s (orderId, revenue, timestamp; abandoned carts are not conversions). Times are Unix
 * seconds. The visit's `userId` (set by the site's tracker) names the contact: an email address, or one
 * of our contact ids; a visitor without one converts anonymously (counted, never attributed).
 */
export interface MatomoVisit {
  idVisit?: number | string;
  userId?: string | null;
  siteCurrency?: string | null;
  lastActionTimestamp?: number | string;
  campaignSource?: string | null;
  campaignMedium?: string | null;
  campaignName?: string | null;
  referrerType?: string | null;
  referrerName?: string | null;
  actionDetails?: MatomoAction[];
}

export interface MatomoAction {
  type?: string;
  goalId?: number | string;
  goalName?: string | null;
  orderId?: string | null;
  revenue?: number | string | null;
  timestamp?: number | string;
}

export interface MatomoSettings {
  /** Used when a visit does not carry its site's currency. */
  currency: string | null;
  /** Names given to goal ids (`{ "3": "signup" }`), over the goal's name in Matomo. */
  goalNames: Record<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function contactRefOf(userId: string | null | undefined): ContactRef {
  const value = userId?.trim();
  if (!value) return null;
  if (UUID.test(value)) return { contactId: value.toLowerCase() };
  const email = normaliseEmail(value);
  return email.ok ? { email: email.address } : null;
}

const text = (value: string | null | undefined): string | null => (value && value.trim() ? value.trim() : null);

/**
 * Campaign parameters of the visit (MarketingCampaignsReporting's fields). Without that plugin, core
 * Matomo still names the campaign of a `campaign` referrer.
 */
function utmOf(visit: MatomoVisit): UtmParameters {
  const campaign = text(visit.campaignName) ?? (visit.referrerType === 'campaign' ? text(visit.referrerName) : null);
  return { source: text(visit.campaignSource), medium: text(visit.campaignMedium), campaign };
}

function secondsToDate(value: number | string | undefined): Date | null {
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
}

export function conversionsOfVisit(visit: MatomoVisit, settings: MatomoSettings): AnalyticsConversion[] {
  const conversions: AnalyticsConversion[] = [];
  const contactRef = contactRefOf(visit.userId);
  const currency = currencyOf(visit.siteCurrency) ?? settings.currency;
  const utm = utmOf(visit);
  for (const action of visit.actionDetails ?? []) {
    const occurredAt = secondsToDate(action.timestamp);
    if (!occurredAt) continue;
    const valueCents = centsOf(action.revenue ?? 0) ?? 0;
    if (action.type === 'goal' && action.goalId !== undefined && visit.idVisit !== undefined) {
      const goalId = String(action.goalId);
      const name = settings.goalNames[goalId] ?? text(action.goalName) ?? `goal ${goalId}`;
      // A goal can convert more than once in a visit (when the goal allows it): the time tells them apart.
      const externalId = `${visit.idVisit}:${goalId}:${Math.floor(occurredAt.getTime() / 1000)}`;
      conversions.push({ externalId, contactRef, name, valueCents, currency, occurredAt, utm });
    } else if (action.type === 'ecommerceOrder' && text(action.orderId)) {
      // An order id is unique per site in Matomo: the same order seen in a later sync is the same conversion.
      conversions.push({ externalId: `order:${text(action.orderId)}`, contactRef, name: 'order', valueCents, currency, occurredAt, utm });
    }
  }
  return conversions;
}

/** The latest last-action time among the visits: what the sync's cursor moves to once the page is recorded. */
export function watermarkOf(visits: readonly MatomoVisit[]): Date | null {
  let latest: Date | null = null;
  for (const visit of visits) {
    const at = secondsToDate(visit.lastActionTimestamp);
    if (at && (!latest || at > latest)) latest = at;
  }
  return latest;
}
