import type { Client } from 'openapi-fetch';
import type { paths } from './schema';
import type { MessagingPaths } from './send-paths';
import { unwrap, type FetchResult } from './unwrap';

/**
 * The service pages its lists three ways (decisions.md, "Lists and pages"): `cursor` + `nextCursor` (commerce
 * orders, inbox threads, a contact's journey), `limit` + `offset` (emails, campaigns, templates, ...) and
 * `page` + `pageSize` (contacts, UTM touches). paginate() walks any of them by its query parameters.
 */
type PageParameter = 'cursor' | 'offset' | 'page';

type GetOperation<P extends keyof paths> = paths[P] extends { get: infer Op } ? Op : never;
type QueryOf<P extends keyof paths> = GetOperation<P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PagedOn<P extends keyof paths> = Extract<keyof QueryOf<P>, PageParameter>;

/** Every GET route of the document whose list is paged: a path literal, checked by the compiler. */
export type PaginatedPath = {
  [P in keyof paths]: [PagedOn<P>] extends [never] ? never : P;
}[keyof paths];

type PageOf<P extends keyof paths> = GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;
type ArrayKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends readonly unknown[] ? K : never }[keyof T];

/** The type of one item of the list a route answers (`CommerceOrder` for /commerce/orders). */
export type PaginatedItem<P extends PaginatedPath> = NonNullable<PageOf<P>[ArrayKeys<PageOf<P>>]> extends readonly (infer Item)[] ? Item : never;

type PathParametersOf<P extends keyof paths> = GetOperation<P> extends { parameters: { path: infer X } } ? X : never;

export type PaginateParams<P extends PaginatedPath> = {
  /** The route's filters and page size (`limit` or `pageSize`); the page position itself is paginate's. */
  query?: Omit<QueryOf<P>, PageParameter>;
  /** Stops the walk (and the request in flight). */
  signal?: AbortSignal;
} & ([PathParametersOf<P>] extends [never] ? { path?: undefined } : { path: PathParametersOf<P> });

type PaginateArgs<P extends PaginatedPath> = [PathParametersOf<P>] extends [never] ? [params?: PaginateParams<P>] : [params: PaginateParams<P>];

type LooseGet = (path: string, init: { params: { path?: unknown; query: Record<string, unknown> }; signal?: AbortSignal }) => Promise<FetchResult<unknown>>;

/**
 * Every item of a paged list, fetching the next page only when the previous one is used up. Errors are
 * thrown as MessagingApiError (rate limits are retried by the client first).
 *
 *   for await (const order of paginate(client, '/api/v1/commerce/orders', { query: { limit: 100 } })) ...
 *   for await (const thread of paginate(client, '/api/v1/inboxes/{id}/threads', { path: { id } })) ...
 */
export async function* paginate<P extends PaginatedPath>(client: Client<MessagingPaths>, path: P, ...[params]: PaginateArgs<P>): AsyncGenerator<PaginatedItem<P>, void, undefined> {
  const get = client.GET as unknown as LooseGet;
  const query: Record<string, unknown> = { ...(params?.query as Record<string, unknown> | undefined) };
  let position: Record<string, unknown> = {};
  for (;;) {
    const page = await unwrap(get(path, { params: { path: params?.path, query: { ...query, ...position } }, signal: params?.signal }));
    const items = itemsOf(page);
    for (const item of items) yield item as PaginatedItem<P>;
    const next = nextPosition(page, items.length, query, position);
    if (!next) return;
    position = next;
  }
}

/** The list of a page: its one array-valued field (`data`, `orders`, `threads`, `campaigns`, ...). */
function itemsOf(page: unknown): unknown[] {
  if (typeof page !== 'object' || page === null) throw new TypeError('paginate: the route did not answer a JSON object');
  const list = Object.values(page).find(Array.isArray);
  if (!list) throw new TypeError('paginate: the page holds no list');
  return list as unknown[];
}

function nextPosition(page: unknown, received: number, query: Record<string, unknown>, position: Record<string, unknown>): Record<string, unknown> | null {
  const body = page as Record<string, unknown>;
  if ('nextCursor' in body) return typeof body.nextCursor === 'string' ? { cursor: body.nextCursor } : null;
  if (received === 0) return null;
  if (typeof body.page === 'number') {
    const pageSize = numberOr(body.pageSize, query.pageSize);
    const total = numberOr(body.total);
    if (total !== undefined && pageSize !== undefined && body.page * pageSize >= total) return null;
    return { page: body.page + 1 };
  }
  const offset = numberOr(body.offset, position.offset) ?? 0;
  const limit = numberOr(body.limit, query.limit);
  const total = numberOr(body.total);
  if (total !== undefined && offset + received >= total) return null;
  // Lists without a total end with a short page; without a known limit, with an empty one.
  if (limit !== undefined && received < limit) return null;
  return { offset: offset + received };
}

function numberOr(...values: unknown[]): number | undefined {
  return values.find((value): value is number => typeof value === 'number');
}
