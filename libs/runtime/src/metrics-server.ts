import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A route beside /metrics: answers GET and HEAD on its path. */
export type MetricsRoute = (req: IncomingMessage) => Promise<{ status: number; body: unknown }>;

export interface MetricsServerOptions {
  registry: Registry;
  /** 0 picks a free port. */
  port: number;
  host: string;
  /** Extra GET routes by path (JSON answers), e.g. `/verify`. `/health` answers `{status:"ok"}` unless given here. */
  routes?: Readonly<Record<string, MetricsRoute>>;
}

export interface MetricsServer {
  /** `http://<host>:<port>/metrics` as bound (0.0.0.0 and :: shown as the loopback address). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `host:port` of a bound address for a URL: a wildcard address becomes the loopback one. */
export function urlHostOf(address: AddressInfo): string {
  if (address.address === '0.0.0.0') return '127.0.0.1';
  if (address.address === '::') return '[::1]';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/**
 * The HTTP endpoint of a process's metrics: `/metrics` (the process registry, Prometheus text
 * format), `/health`, and the routes a part adds (the projections' `/verify`). Every Agora process
 * runs one on METRICS_PORT.
 */
export async function serveMetrics(options: MetricsServerOptions): Promise<MetricsServer> {
  const routes: Record<string, MetricsRoute> = { '/health': async () => ({ status: 200, body: { status: 'ok' } }), ...options.routes };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = routes[path];
    try {
      if (path !== '/metrics' && !route) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`not found: try ${['/metrics', ...Object.keys(routes)].join(', ')}\n`);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
        return;
      }
      if (!route) {
        const body = await options.registry.metrics();
        res.writeHead(200, { 'content-type': options.registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      const { status, body } = await route(req);
      res.writeHead(status, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${(error as Error).message}\n`);
    }
  };
  const server = createServer((req, res) => void answer(req, res));
  const address = await listen(server, options.port, options.host);
  return {
    url: `http://${urlHostOf(address)}:${address.port}/metrics`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
