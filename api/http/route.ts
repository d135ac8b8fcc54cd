import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { nestedDeeperThan } from '../../core/json-depth';
import { findUnsafeText, UNSAFE_TEXT_MESSAGE } from '../../core/unsafe-text';
import { holdsHeavySlot, type RouteCost } from '../../core/request-costs';
import { grantsAny, type Scope, widenedWrite } from '../../core/scopes';
import type { AllowedMethods } from './allowed-methods';
import { type Principal, principalOf } from './auth';
import { ErrorSchema, InputErrorSchema } from './openapi';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call a route: holders of one of these scopes, or any valid key (GET /usage). */
export type Access = Scope | readonly Scope[] | 'any-key';

export interface Reply {
  status: number;
  body?: unknown;
  /** Writes the body itself (a CSV export), instead of `body` as JSON: the status is set, headers are not sent yet. */
  stream?: (res: Response) => Promise<void>;
  /** Extra response headers (a 202's Location). */
  headers?: Record<string, string>;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  req: Request;
}

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/**
 * How large a body the route reads: `default` (MAX_BODY_BYTES, small) unless inline base64 files travel
 * in it (`large`, MAX_SEND_BODY_BYTES), so no other route makes the server buffer and parse megabytes.
 */
export type BodyLimit = 'default' | 'large';

export interface RouteDefinition<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  /** What a call spends of the workspace's request budget (core/request-costs.ts); `standard` unless said. */
  cost?: RouteCost;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  bodyLimit?: BodyLimit;
  /** Documented responses; the first success entry is the normal outcome. */
  responses: Record<number, { description: string; schema?: Schema; alsoAs?: Record<string, Schema> }>;
  handle: (input: HandlerInput<Infer<P>, Infer<Q>, Infer<B>>) => Promise<Reply>;
}

/** No request body needs more levels; deeper ones would overflow the stack of the steps after parsing. */
const MAX_BODY_DEPTH = 32;

/** Error responses every authenticated route can give, documented once. */
const COMMON_ERRORS: Record<number, string> = {
  401: 'Missing, invalid or revoked API key',
  403: 'The key lacks the required scope',
  429: 'Rate limit exceeded (see Retry-After)',
};

export interface RouteTableDeps {
  router: Router;
  registry: OpenAPIRegistry;
  /** Authentication and rate limit, run before the scope check on every keyed route. */
  edge: RequestHandler[];
  /** Parse JSON bodies up to each limit; run after the scope check, so unauthenticated callers never cost a parse. */
  parseBody: Record<BodyLimit, RequestHandler>;
  /** Collects each path's methods for the 405 answer of the methods a path lacks. */
  allowed: AllowedMethods;
  /** The workspace's budget: its rate limit by cost, after the scope check, and its slots of heavy work, just before the handler. */
  budget: { spend: (cost: RouteCost) => RequestHandler; heavySlot: RequestHandler };
}

/**
 * A resource's routes, each declared on one line with its access and schemas. The same declaration
 * mounts the Express handler chain (edge → scope → validation → handler) and documents the route.
 */
export class RouteTable {
  constructor(
    private readonly deps: RouteTableDeps,
    private readonly tag: string,
  ) {}

  get<P extends Schema | undefined, Q extends Schema | undefined>(path: string, access: Access, def: RouteDefinition<P, Q, undefined>): void {
    this.add('get', path, access, def);
  }

  post<P extends Schema | undefined, B extends Schema | undefined>(path: string, access: Access, def: RouteDefinition<P, undefined, B>): void {
    this.add('post', path, access, def);
  }

  put<P extends Schema | undefined, B extends Schema | undefined>(path: string, access: Access, def: RouteDefinition<P, undefined, B>): void {
    this.add('put', path, access, def);
  }

  patch<P extends Schema | undefined, B extends Schema | undefined>(path: string, access: Access, def: RouteDefinition<P, undefined, B>): void {
    this.add('patch', path, access, def);
  }

  /** A body is allowed where a removal names what to remove (DELETE /lists/:id/contacts with contactIds). */
  delete<P extends Schema | undefined, B extends Schema | undefined = undefined>(path: string, access: Access, def: RouteDefinition<P, undefined, B>): void {
    this.add('delete', path, access, def);
  }

  private add<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined>(
    method: Method,
    path: string,
    access: Access,
    def: RouteDefinition<P, Q, B>,
  ): void {
    const handler: RequestHandler = async (req, res) => {
      if (def.body && nestedDeeperThan(req.body, MAX_BODY_DEPTH)) {
        throw AppError.validation({ formErrors: [`The body is nested deeper than ${MAX_BODY_DEPTH} levels`], fieldErrors: {} });
      }
      refuseUnsafeText(req.query);
      if (def.body) refuseUnsafeText(req.body);
      const input = {
        // A malformed id cannot name an existing resource, so it is answered like an unknown one.
        params: parseOr(def.params, req.params, () => AppError.notFound('Resource')),
        query: parseOr(def.query, req.query, validationError),
        // No body at all reads as an empty object; a JSON `null` is a body of the wrong type, refused by the schema.
        body: parseOr(def.body, req.body === undefined ? {} : req.body, validationError),
        principal: principalOf(res),
        req,
      } as HandlerInput<Infer<P>, Infer<Q>, Infer<B>>;
      const reply = await def.handle(input);
      if (reply.headers) res.set(reply.headers);
      if (reply.stream) return streamReply(res, reply.status, reply.stream);
      if (reply.body === undefined) res.status(reply.status).end();
      else res.status(reply.status).json(reply.body);
    };
    const parse = def.body ? [this.deps.parseBody[def.bodyLimit ?? 'default']] : [];
    const cost = def.cost ?? 'standard';
    const slot = holdsHeavySlot(cost) ? [this.deps.budget.heavySlot] : [];
    // The budget after the scope check: a key refused 403 spends only its own per-key request, not its workspace's points.
    this.deps.router[method](path, ...this.deps.edge, requireAccess(access), this.deps.budget.spend(cost), ...parse, ...slot, handler);
    this.deps.allowed.record(path, method);
    this.document(method, path, access, def);
  }

  private document(method: Method, path: string, access: Access, def: RouteDefinition<Schema | undefined, Schema | undefined, Schema | undefined>): void {
    const scopes = access === 'any-key' ? [] : ([] as Scope[]).concat(access);
    const responses: RouteConfig['responses'] = {};
    for (const [status, response] of Object.entries(def.responses)) {
      // `alsoAs`: other media types the same answer can take (text/csv with format=csv).
      const content = { ...(response.schema && { 'application/json': { schema: response.schema } }), ...Object.fromEntries(Object.entries(response.alsoAs ?? {}).map(([type, schema]) => [type, { schema }])) };
      responses[status] = Object.keys(content).length ? { description: response.description, content } : { description: response.description };
    }
    for (const [status, description] of Object.entries(COMMON_ERRORS)) {
      if (status === '403' && scopes.length === 0) continue;
      responses[status] ??= { description, content: { 'application/json': { schema: ErrorSchema } } };
    }
    if (def.body) {
      responses['400'] ??= {
        description: 'invalid_json: the body is not JSON at all (JSON of the wrong type is a 422)',
        content: { 'application/json': { schema: ErrorSchema } },
      };
      responses['413'] ??= {
        description: `payload_too_large: the body is over ${def.bodyLimit === 'large' ? 'MAX_SEND_BODY_BYTES (40 MiB by default)' : 'MAX_BODY_BYTES (1 MiB by default)'}`,
        content: { 'application/json': { schema: ErrorSchema } },
      };
    }
    if (def.body || def.query) {
      responses['422'] ??= {
        description: 'Validation failed (`validation_error`, by field), or a rule of the route refused the input (its code)',
        // Any route may raise a 422 code of its own (template_not_found, too_many_recipients...) beside the
        // field-by-field shape, so a client generated from the document must accept both.
        content: { 'application/json': { schema: InputErrorSchema } },
      };
    }
    const cost = def.cost ?? 'standard';
    const costText = cost === 'standard' ? '' : ` Cost: ${cost} (spends more of the workspace's request budget${holdsHeavySlot(cost) ? ' and holds one of its slots of heavy work while it runs' : ''}).`;
    const widened = widenedWrite(scopes);
    const literalText = widened
      ? ` The spec's table writes ${widened} for this read; ${widened.replace(/:write$/, ':read')} is accepted too, as on every such route.`
      : '';
    const scopeText = `${scopes.length ? `Scope: ${scopes.join(' or ')}.` : 'Any valid API key.'}${literalText}${costText}`;
    this.deps.registry.registerPath({
      method,
      path: `/api/v1${path.replace(/:(\w+)/g, '{$1}')}`,
      tags: [this.tag],
      summary: def.summary,
      description: scopeText,
      security: [{ bearerAuth: [] }],
      'x-scopes': scopes,
      'x-cost': cost,
      request: {
        ...(def.params && { params: def.params as z.ZodObject }),
        ...(def.query && { query: def.query as z.ZodObject }),
        // Every body schema is an object the route reads, so none may be left out (the document defaults to optional).
        ...(def.body && { body: { required: true, content: { 'application/json': { schema: def.body } } } }),
      },
      responses,
    });
  }
}

/** A failure before the first byte gets the usual error answer; after it, the response can only be cut short. */
async function streamReply(res: Response, status: number, stream: (res: Response) => Promise<void>): Promise<void> {
  res.status(status);
  try {
    await stream(res);
  } catch (error) {
    if (!res.headersSent) throw error;
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

function requireAccess(access: Access): RequestHandler {
  if (access === 'any-key') return (_req, _res, next) => next();
  const needed: readonly Scope[] = typeof access === 'string' ? [access] : access;
  return (_req, res, next) => {
    if (!grantsAny(principalOf(res).scopes, needed)) {
      throw new AppError('forbidden', 'The API key lacks the required scope', { need: needed.join('|') });
    }
    next();
  };
}

/** NUL and lone surrogates are refused here, once for every route, before zod or the database reads them. */
function refuseUnsafeText(value: unknown): void {
  const path = findUnsafeText(value);
  if (path === null) return;
  throw AppError.validation(path === '' ? { formErrors: [UNSAFE_TEXT_MESSAGE], fieldErrors: {} } : { formErrors: [], fieldErrors: { [path]: [UNSAFE_TEXT_MESSAGE] } });
}

function validationError(error: z.ZodError): AppError {
  return AppError.validation(z.flattenError(error));
}

function parseOr(schema: Schema | undefined, value: unknown, fail: (error: z.ZodError) => AppError): unknown {
  if (!schema) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fail(parsed.error);
  return parsed.data;
}
