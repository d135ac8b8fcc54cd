import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** One log line per request, with the request id every answer carries in X-Request-Id. */
export function requestLogger(logger: Logger) {
  return pinoHttp({
    logger,
    // A caller's own request id is kept (when sane) so logs join across services.
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    // Tracking hits are stored as events; a log line each would only repeat them, at the highest volume of all.
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' || Boolean(req.url?.startsWith('/t/')) },
  });
}
