import type { Router } from 'express';
import { AppError } from '../../core/errors';

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The methods each path of the route table has, so a known path asked with another method answers 405 with
 * an `Allow` header that matches the OpenAPI document, rather than 404 as an unknown path does.
 */
export class AllowedMethods {
  private readonly byPath = new Map<string, Set<string>>();

  record(path: string, method: string): void {
    const methods = this.byPath.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    this.byPath.set(path, methods);
  }

  /**
   * Mounted after every route, so only requests no route took reach it. Express matches the paths itself;
   * when several match (`/contacts/export` and `/contacts/:id`), Allow is their union, since each of those
   * methods would be dispatched for this path. OPTIONS is not declared by any route, so it answers 405 too.
   */
  mount(router: Router): void {
    const matched = new WeakMap<object, Set<string>>();
    for (const [path, methods] of this.byPath) {
      router.all(path, (req, _res, next) => {
        const allow = matched.get(req) ?? new Set<string>();
        for (const method of methods) allow.add(method);
        matched.set(req, allow);
        next();
      });
    }
    router.use((req, res, next) => {
      const allow = matched.get(req);
      if (!allow) return next();
      res.setHeader('Allow', ORDER.filter((method) => allow.has(method)).join(', '));
      next(new AppError('method_not_allowed', `${req.method} is not allowed on this path`));
    });
  }
}
