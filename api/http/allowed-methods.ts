import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../../core/errors';

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** One segment of a route path: a literal, or a parameter (`:id`) that takes any one segment. */
type Segment = { literal: string } | { param: true };

const segmentsOf = (path: string): Segment[] =>
  path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? { param: true } : { literal: part }));

/**
 * Which of two matching templates is the more specific: the first segment where they differ decides, a
 * literal beating a parameter (OpenAPI's rule: `/contacts/export` before `/contacts/{id}`).
 */
function compareSpecificity(a: Segment[], b: Segment[]): number {
  for (let index = 0; index < a.length; index += 1) {
    const left = 'literal' in a[index];
    const right = 'literal' in b[index];
    if (left !== right) return left ? -1 : 1;
  }
  return 0;
}

function matches(template: Segment[], parts: string[]): boolean {
  return template.length === parts.length && template.every((segment, index) => !('literal' in segment) || segment.literal === parts[index]);
}

/**
 * The methods each path of the route table has, so a known path asked with another method answers 405 with
 * an `Allow` header that matches the OpenAPI document, rather than 404 as an unknown path does.
 */
export class AllowedMethods {
  private readonly byPath = new Map<string, { segments: Segment[]; methods: Set<string> }>();

  record(path: string, method: string): void {
    const entry = this.byPath.get(path) ?? { segments: segmentsOf(path), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    this.byPath.set(path, entry);
  }

  /**
   * The methods of the document's path a request path falls under, or undefined for a path the table does
   * not know. Where several templates match, the most specific one is the path (`/emails/batch` is not
   * `/emails/{id}`), so its Allow is exactly what the document lists for it.
   */
  methodsOf(requestPath: string): Set<string> | undefined {
    const parts = requestPath.split('/').filter(Boolean).map(decodeSegment);
    let best: { segments: Segment[]; methods: Set<string> } | undefined;
    for (const entry of this.byPath.values()) {
      if (!matches(entry.segments, parts)) continue;
      if (!best || compareSpecificity(entry.segments, best.segments) < 0) best = entry;
    }
    return best?.methods;
  }

  /**
   * Mounted before every route: a method the request's document path lacks answers 405 with `Allow` here,
   * before an overlapping parameterised route (PATCH /segments/{id} for /segments/preview) could take it and
   * answer 404 for an id. HEAD follows GET, as Express serves it; OPTIONS is declared by no route, so it
   * answers 405 too. `limitHeaders` writes the rate-limit headers every answer carries.
   */
  guard(limitHeaders: (req: Request, res: Response) => Promise<void>): RequestHandler {
    return async (req, res, next) => {
      const allow = this.methodsOf(req.path);
      if (!allow || allow.has(req.method) || (req.method === 'HEAD' && allow.has('GET'))) return next();
      res.setHeader('Allow', ORDER.filter((method) => allow.has(method)).join(', '));
      await limitHeaders(req, res);
      throw new AppError('method_not_allowed', `${req.method} is not allowed on this path`);
    };
  }
}

function decodeSegment(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
