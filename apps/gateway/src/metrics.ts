import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Labels that name an agent, or what one decided: a metric with one of them is served only with the scrape token. */
export const METRICS_ID_LABELS: ReadonlySet<string> = new Set(['agent', 'agentId', 'reviewer', 'validator', 'constitution', 'operator', 'actor']);

/**
 * The Prometheus text of a registry: every metric with the scrape token, else only the metrics
 * whose label names include none of METRICS_ID_LABELS.
 */
export async function metricsText(registry: Registry, whole: boolean): Promise<string> {
  if (whole) return registry.metrics();
  const open = registry.getMetricsAsArray().filter((metric) => !((metric as { labelNames?: readonly string[] }).labelNames ?? []).some((label) => METRICS_ID_LABELS.has(label)));
  const texts = await Promise.all(open.map((metric) => registry.getSingleMetricAsString((metric as unknown as { name: string }).name)));
  return `${texts.filter((t) => t !== '').join('\n')}\n`;
}

/** Label of requests no route took (unknown paths): never the raw URL, which would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

interface RouteMark {
  route: string;
  /** Long-lived responses (SSE): counted, but kept out of the duration histogram. */
  streaming: boolean;
}

const marks = new WeakMap<IncomingMessage, RouteMark>();

/** Names the route pattern (`/v1/registry/agents/:agentId`, never an id) a request is counted under. */
export function markRoute(req: IncomingMessage, route: string, options: { streaming?: boolean } = {}): void {
  marks.set(req, { route, streaming: options.streaming ?? false });
}

/** The route pattern a request was marked with (UNMATCHED_ROUTE when none), and whether it streams. */
export function routeOf(req: IncomingMessage): RouteMark {
  return marks.get(req) ?? { route: UNMATCHED_ROUTE, streaming: false };
}

/**
 * The gateway's metrics: requests by route, method and status, in the registry of its process
 * (`context.metrics.registry`, given by the gateway's process and the standalone one), or else in
 * a registry of its own with the default process metrics (tests run several gateways in one
 * process). `close()` takes them out of a given registry again.
 */
export class GatewayMetrics {
  readonly registry: Registry;
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'route' | 'method'>;

  constructor(registry?: Registry) {
    this.registry = registry ?? new Registry();
    if (!registry) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'agora_gateway_http_requests_total',
      help: 'HTTP requests answered by the gateway, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'agora_gateway_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route pattern and method (SSE streams excluded)',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  /** Takes the gateway's metrics out of the registry (the process's one outlives the gateway). */
  close(): void {
    this.registry.removeSingleMetric('agora_gateway_http_requests_total');
    this.registry.removeSingleMetric('agora_gateway_http_request_duration_seconds');
  }

  /** Express-style middleware: counts every response once it is finished or its connection gone. */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const started = process.hrtime.bigint();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const mark = marks.get(req);
      const route = mark?.route ?? UNMATCHED_ROUTE;
      const method = req.method ?? 'GET';
      this.requests.inc({ route, method, status: String(res.statusCode) });
      if (!mark?.streaming) this.duration.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}
