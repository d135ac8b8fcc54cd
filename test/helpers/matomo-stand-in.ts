import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MatomoVisit } from '../../providers/matomo/visits';

/** A call the stand-in got: the query (method, paging, dates) and whether the token came in the body. */
export interface MatomoCall {
  query: Record<string, string>;
  tokenInBody: boolean;
}

export interface MatomoSite {
  idSite: number;
  token: string;
  currency: string;
  visits: MatomoVisit[];
}

export interface MatomoStandIn {
  /** `http://127.0.0.1:<port>/matomo/`: a Matomo installed under a path, as many are. */
  url: string;
  calls: MatomoCall[];
  /** A site with its own token (only that token opens it) and its visits, which the test may change. */
  addSite: (site: MatomoSite) => MatomoSite;
  /** Every API call answers this status (a Matomo behind a failing proxy) until cleared with null. */
  failWith: (status: number | null) => void;
  /** Each Live.getLastVisitsDetails call takes this long to answer (a big site), until set back to 0. */
  slowVisits: (ms: number) => void;
  close: () => Promise<void>;
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Matomo's Reporting API as far as the connector uses it, spoken over real HTTP: `index.php?module=API`
 * with `format=JSON`, `token_auth` read from the POST body only (Matomo accepts it there; a token in the
 * URL is refused here, so a test notices one leaking into URLs), 401 with Matomo's error body for an
 * unknown token, `{ result: 'error' }` with 200 for a site the token cannot see (as Matomo answers),
 * `SitesManager.getSiteFromId`, and `Live.getLastVisitsDetails` with `period=range&date=from,to` (whole
 * UTC days of the visit's last action), `filter_sort_order`, `filter_limit` and `filter_offset`.
 */
export async function startMatomoStandIn(): Promise<MatomoStandIn> {
  const sites: MatomoSite[] = [];
  const calls: MatomoCall[] = [];
  let failing: number | null = null;
  let visitsDelayMs = 0;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  function visits(site: MatomoSite, query: Record<string, string>): MatomoVisit[] | string {
    if (query.period !== 'range') return 'period must be range here';
    const [from, to] = (query.date ?? '').split(',');
    if (!/^\d{4}-\d{2}-\d{2}$/.test(from ?? '') || !/^\d{4}-\d{2}-\d{2}$/.test(to ?? '')) return 'date must be YYYY-MM-DD,YYYY-MM-DD';
    const inRange = site.visits.filter((visit) => {
      const last = day(Number(visit.lastActionTimestamp));
      return last >= from && last <= to;
    });
    const ascending = query.filter_sort_order === 'asc';
    inRange.sort((a, b) => (Number(a.lastActionTimestamp) - Number(b.lastActionTimestamp)) * (ascending ? 1 : -1));
    const offset = Number(query.filter_offset ?? 0);
    const limit = Number(query.filter_limit ?? 100);
    return inRange.slice(offset, offset + limit);
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const body = new URLSearchParams(await readBody(req));
      const query = Object.fromEntries(url.searchParams);
      const token = body.get('token_auth');
      calls.push({ query, tokenInBody: token !== null });
      if (url.pathname !== '/matomo/index.php' || query.module !== 'API') return json(res, 404, { result: 'error', message: 'Not found' });
      if (failing !== null) return json(res, failing, { result: 'error', message: 'Upstream failure' });
      if (req.method !== 'POST' || 'token_auth' in query) return json(res, 400, { result: 'error', message: 'token_auth must be sent in the POST body' });
      if (query.format !== 'JSON') return json(res, 400, { result: 'error', message: 'format must be JSON here' });
      if (!sites.some((site) => site.token === token)) {
        return json(res, 401, { result: 'error', message: 'Unable to authenticate with the provided token. It is either invalid or expired.' });
      }
      const site = sites.find((candidate) => candidate.token === token && String(candidate.idSite) === query.idSite);
      if (!site) return json(res, 200, { result: 'error', message: `You can't access this resource as it requires 'view' access for the website id = ${query.idSite}.` });
      if (query.method === 'SitesManager.getSiteFromId') return json(res, 200, { idsite: String(site.idSite), name: 'Shop', currency: site.currency });
      if (query.method === 'Live.getLastVisitsDetails') {
        if (visitsDelayMs) await new Promise((resolve) => setTimeout(resolve, visitsDelayMs));
        const answer = visits(site, query);
        return typeof answer === 'string' ? json(res, 200, { result: 'error', message: answer }) : json(res, 200, answer);
      }
      return json(res, 200, { result: 'error', message: `The method '${query.method}' does not exist` });
    })().catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/matomo/`,
    calls,
    addSite: (site) => {
      sites.push(site);
      return site;
    },
    failWith: (status) => {
      failing = status;
    },
    slowVisits: (ms) => {
      visitsDelayMs = ms;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
