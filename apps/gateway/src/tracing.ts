import type { IncomingMessage, ServerResponse } from 'node:http';
import { contextFrom, failed, SpanKind, startSpan, tracingOn } from '@agora/tracing';
import { routeOf } from './metrics.js';

/**
 * Express-style middleware: with tracing on, one server span per HTTP request, continuing the
 * caller's trace when it sends a W3C `traceparent` header, active while the gateway handles it (so
 * the request it sends to a service carries it), ended when the response is finished or its
 * connection gone: for an SSE subscription (`/v1/events`), the span lasts the subscription. Named
 * `<METHOD> <route pattern>` (never an id), with the status; 5xx marks it as failed. With tracing
 * off it only calls `next`.
 */
export function tracingMiddleware(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (!tracingOn()) return next();
  const method = req.method ?? 'GET';
  startSpan(`${method}`, { kind: SpanKind.SERVER, parent: contextFrom(req.headers), attributes: { 'http.request.method': method, 'url.path': (req.url ?? '/').split('?')[0] } }, (span) => {
    let ended = false;
    const end = () => {
      if (ended || !span) return;
      ended = true;
      const { route, streaming } = routeOf(req);
      span.updateName(`${method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode, ...(streaming ? { 'agora.sse': true } : {}) });
      if (res.statusCode >= 500) failed(span, String(res.statusCode));
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    next();
  });
}
