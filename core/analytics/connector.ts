/**
 * The analytics connector (issue 18): where conversions measured by an analytics product come from. A
 * connector reads one page at a time, so a sync can commit each page with its cursor and resume after a
 * restart; it only reads, recording is the sync's (activities/analytics-sync.ts). Implementations:
 * Matomo's Reporting HTTP API (providers/matomo/connector.ts) and an uploaded CSV (providers/analytics-csv/connector.ts).
 */

/** Who converted, as the analytics product knows them: an email address or one of our contact ids. */
export type ContactRef = { email: string } | { contactId: string } | null;

export interface UtmParameters {
  source: string | null;
  medium: string | null;
  campaign: string | null;
}

export interface AnalyticsConversion {
  /** What makes it the same conversion in a later sync (Matomo: `<idVisit>:<goalId>:<timestamp>`, `order:<orderId>`). */
  externalId: string;
  contactRef: ContactRef;
  name: string;
  /** Hundredths of the currency's major unit, as every conversion (core/attribution/event-value.ts). */
  valueCents: number;
  currency: string | null;
  occurredAt: Date;
  /** The visit's own campaign parameters, kept when the contact has no touch of ours in the window. */
  utm: UtmParameters;
}

/** The times a sync reads between (inclusive); null is unbounded. */
export interface SyncWindow {
  since: Date | null;
  until: Date | null;
}

export interface ConversionPage {
  conversions: AnalyticsConversion[];
  /** Where the next page starts; null after the last page. Opaque to the sync. */
  nextCursor: string | null;
  /** The latest activity time this page read (Matomo: the last action of its latest visit), if any. */
  watermark: Date | null;
}

export interface AnalyticsConnector {
  fetchConversions(window: SyncWindow, cursor: string | null): Promise<ConversionPage>;
}

/**
 * Why a connector could not read, in terms the sync keeps on the connection and the API answers with:
 * `refused` (the product said no: bad token, no access to the site; retrying cannot help), `unavailable`
 * (down, 5xx, timeout: worth a retry), `invalid` (the data itself is wrong: a CSV row, named by its line).
 */
export type ConnectorFailureKind = 'refused' | 'unavailable' | 'invalid';

export class ConnectorError extends Error {
  constructor(
    readonly kind: ConnectorFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

/** Major-unit revenue (a number or a numeric string, as Matomo gives it) in cents; null when it is not one. */
export function centsOf(value: unknown): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(number) || number < 0 || number > 1e12) return null;
  return Math.round(number * 100);
}

const CURRENCY = /^[A-Za-z]{3}$/;

export function currencyOf(value: unknown): string | null {
  return typeof value === 'string' && CURRENCY.test(value) ? value.toUpperCase() : null;
}
