import { type AnalyticsConnector, ConnectorError, type ConversionPage, currencyOf, type SyncWindow } from '../../core/analytics/connector';
import { conversionsOfVisit, type MatomoVisit, watermarkOf } from './visits';

/**
 * Matomo's Reporting HTTP API (https://developer.matomo.org/api-reference/reporting-api): the analytics
 * connector's one real product (docs/analytics.md says why Matomo). Every call goes through the SSRF-safe
 * fetcher, since the base URL is the workspace's; `token_auth` travels in the POST body, never in the URL
 * (URLs end up in access logs), and is never logged or put in an error message.
 */
export interface MatomoConnection {
  baseUrl: string;
  siteId: number;
  tokenAuth: string;
  currency: string | null;
  goalNames: Record<string, string>;
}

/**
 * How a call reaches the workspace's Matomo: the caller's SSRF-safe exchange (infra/public-fetch.ts,
 * exchangePublic), within the limits given. It rejects before connecting when the URL itself is refused,
 * with an error whose `reason` says why (`invalid_url`, `not_https`, `blocked_address`, `unresolvable`).
 */
export type MatomoExchange = (
  url: string,
  request: { body: string; headers: Record<string, string> },
  limits: { timeoutMs: number; maxBytes: number },
) => Promise<{ statusCode: number; body: Buffer }>;

/** Reasons of an exchange's rejection that mean the base URL is refused, not that Matomo is down. */
const REFUSED_URL = new Set(['invalid_url', 'not_https', 'blocked_address', 'unresolvable']);

/** Visits per API call: Matomo's Live API gets slow past a few hundred visits with all their actions. */
export const MATOMO_PAGE_VISITS = 100;
const CALL_TIMEOUT_MS = 20_000;
/** A page of visits with every action can be large; past this the site's page size must come down. */
const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

/** `https://stats.example.com/matomo` and `.../matomo/` and `.../matomo/index.php` all mean the same API. */
export function matomoEndpoint(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (!url.pathname.endsWith('/index.php')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/index.php`;
  url.search = '';
  url.hash = '';
  return url;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

function failureOf(error: unknown): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const reason = (error as { reason?: unknown } | null)?.reason;
  if (error instanceof Error && typeof reason === 'string') {
    return new ConnectorError(REFUSED_URL.has(reason) ? 'refused' : 'unavailable', `Matomo could not be reached: ${error.message}`);
  }
  return new ConnectorError('unavailable', `Matomo could not be reached: ${error instanceof Error ? error.message : String(error)}`);
}

/** One API method's answer, or the reason there is none. Matomo reports most errors as `{ result: 'error' }`. */
export async function callMatomo(
  connection: Pick<MatomoConnection, 'baseUrl' | 'tokenAuth'>,
  params: Record<string, string>,
  exchange: MatomoExchange,
): Promise<unknown> {
  const url = matomoEndpoint(connection.baseUrl);
  for (const [key, value] of Object.entries({ module: 'API', format: 'JSON', ...params })) url.searchParams.set(key, value);
  let answer: { statusCode: number; body: Buffer };
  try {
    answer = await exchange(
      url.toString(),
      {
        body: new URLSearchParams({ token_auth: connection.tokenAuth }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'messaging-analytics/1.0' },
      },
      { timeoutMs: CALL_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES },
    );
  } catch (error) {
    throw failureOf(error);
  }
  const { statusCode } = answer;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const message = (parsed as { result?: unknown; message?: unknown } | undefined)?.result === 'error' ? String((parsed as { message?: unknown }).message ?? '') : null;
  if (statusCode === 401 || statusCode === 403) throw new ConnectorError('refused', `Matomo refused the token (${statusCode})${message ? `: ${message}` : ''}`);
  if (statusCode < 200 || statusCode > 299) throw new ConnectorError('unavailable', `Matomo answered ${statusCode}`);
  if (parsed === undefined) throw new ConnectorError('unavailable', 'Matomo answered something that is not JSON (is the base URL a Matomo?)');
  // An error Matomo answers with 200: an unknown site, a token without access to it.
  if (message !== null) throw new ConnectorError('refused', `Matomo refused the request: ${message.slice(0, 300)}`);
  return parsed;
}

/**
 * Checks the connection with Matomo (the token opens the site) and answers the site's currency: what
 * PUT /integrations/analytics runs before it stores anything.
 */
export async function checkMatomoSite(connection: Pick<MatomoConnection, 'baseUrl' | 'tokenAuth' | 'siteId'>, exchange: MatomoExchange): Promise<{ currency: string | null }> {
  const site = await callMatomo(connection, { method: 'SitesManager.getSiteFromId', idSite: String(connection.siteId) }, exchange);
  return { currency: currencyOf((site as { currency?: unknown } | null)?.currency) };
}

/**
 * Visits of the window's days, oldest last action first, a page of MATOMO_PAGE_VISITS at a time (the cursor
 * is the offset). Matomo's range is in whole days of the site's time zone, so conversions outside the
 * window's exact times are left out here. A visit still going on when read moves to the end of the order
 * as it gains actions; the next sync, which starts before the cursor, reads it again.
 */
export function matomoConnector(connection: MatomoConnection, exchange: MatomoExchange, pageSize = MATOMO_PAGE_VISITS): AnalyticsConnector {
  return {
    async fetchConversions(window: SyncWindow, cursor: string | null): Promise<ConversionPage> {
      const offset = cursor === null ? 0 : Number(cursor);
      const since = window.since ?? new Date(0);
      const until = window.until ?? new Date();
      const answer = await callMatomo(
        connection,
        {
          method: 'Live.getLastVisitsDetails',
          idSite: String(connection.siteId),
          period: 'range',
          date: `${day(since)},${day(until)}`,
          filter_limit: String(pageSize),
          filter_offset: String(offset),
          filter_sort_order: 'asc',
        },
        exchange,
      );
      if (!Array.isArray(answer)) throw new ConnectorError('unavailable', 'Matomo answered visits in an unknown shape');
      const visits = answer as MatomoVisit[];
      const conversions = visits
        .flatMap((visit) => conversionsOfVisit(visit, connection))
        .filter((conversion) => conversion.occurredAt >= since && conversion.occurredAt <= until);
      return { conversions, nextCursor: visits.length < pageSize ? null : String(offset + visits.length), watermark: watermarkOf(visits) };
    },
  };
}
