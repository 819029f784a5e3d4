import { createServer, type AddressInfo } from 'node:net';
import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { consoleAssetsDir, consoleBuilt } from '@agora/console';
import { consoleAssets } from './console-assets.js';
import { tracingMiddleware } from './tracing.js';
import { EventStreams, GatewayController, queryController } from './gateway.controller.js';
import { ReplyExceptionFilter } from './http-reply.js';
import { NatsAgoraClient } from '@agora/messaging';
import { A2A_CARD_PATH, A2A_PATH, a2aRoute } from './a2a/route.js';
import { openSharedRecords } from './a2a/push-store.js';
import { DEFAULT_A2A_PUSH_CONFIG_TTL_MS } from './a2a/settings.js';
import { mcpRoute } from './mcp-route.js';
import { GatewayMetrics } from './metrics.js';
import { DEFAULT_PORT, GATEWAY_OPTIONS, resolveOptions, type Gateway, type GatewayOptions, type ResolvedGatewayOptions } from './options.js';
import { queryRoutes } from './query-routes.js';

@Module({})
export class GatewayModule {
  /** The gateway's routes over the given client, store and catalog (startGateway does the rest). */
  static forRoot(options: ResolvedGatewayOptions, metrics: GatewayMetrics, streams: EventStreams): DynamicModule {
    const queries = queryController(queryRoutes(options.catalog.queries));
    const controllers: Type<unknown>[] = [GatewayController, ...(queries ? [queries] : [])];
    return {
      module: GatewayModule,
      controllers,
      providers: [
        { provide: GATEWAY_OPTIONS, useValue: options },
        { provide: GatewayMetrics, useValue: metrics },
        { provide: EventStreams, useValue: streams },
      ],
    };
  }
}

/** `http://<host>:<port>` to reach a server listening on `address`; a wildcard host becomes loopback. */
function urlOf(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Rejects with the listen error (EADDRINUSE, EACCES: with port and address) when `port` cannot be listened on. */
function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** The version the Agent Card and /docs give. */
const GATEWAY_VERSION = '0.1.0';

/**
 * Starts the HTTP gateway: POST /v1/commands, GET /v1/<service>/<query path>, GET /v1/events
 * (SSE), /mcp (MCP over Streamable HTTP), /a2a and /.well-known/agent-card.json (A2A), /health, /metrics, /docs (OpenAPI 3.1) and the web console at `/`. Used by the gateway's own process and by
 * the one-process standalone mode; resolves once it listens.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const resolved = resolveOptions(options);
  const metrics = new GatewayMetrics(options.registry);
  const streams = new EventStreams(resolved);
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(resolved, metrics, streams), {
    // Command bodies are read by the handler, with the gateway's own limit and error replies.
    bodyParser: false,
    // SSE streams and keep-alive connections must not hold up close().
    forceCloseConnections: true,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  app.disable('x-powered-by');
  app.use(metrics.middleware);
  app.use(tracingMiddleware);
  // With reads closed, /mcp reads as the reader of each request's read token, by the visibility table.
  const mcpSetting = options.mcp;
  const mcp = mcpSetting === false ? undefined : mcpRoute(resolved.client, { reads: resolved.reads, parties: streams.parties }, { maxBodyBytes: resolved.maxBodyBytes, requestTimeoutMs: resolved.requestTimeoutMs, ...(mcpSetting?.allowedHostnames ? { allowedHostnames: mcpSetting.allowedHostnames } : {}), ...(mcpSetting?.sessions ? { sessions: mcpSetting.sessions } : {}) });
  if (mcp) app.use('/mcp', mcp.handler);
  // A2A: the Agent Card and the JSON-RPC binding, the caller proven as for any read.
  const a2aSetting = options.a2a === false ? undefined : (options.a2a ?? {});
  const a2a =
    a2aSetting === undefined
      ? undefined
      : a2aRoute(resolved, streams.parties, a2aSetting, GATEWAY_VERSION, await openSharedRecords({ connection: resolved.client instanceof NatsAgoraClient ? resolved.client.connection : undefined, ...options.shared }, (a2aSetting.pushConfigTtlSeconds ?? DEFAULT_A2A_PUSH_CONFIG_TTL_MS / 1000) * 1000));
  if (a2a) {
    app.use(A2A_CARD_PATH, ...a2a.card);
    app.use(A2A_PATH, ...a2a.rpc);
  }
  if (options.console !== false) {
    const dir = options.console ?? consoleAssetsDir();
    app.use(consoleAssets(consoleBuilt(dir) ? dir : undefined));
  }
  app.useGlobalFilters(new ReplyExceptionFilter());
  try {
    // A port in use is found before Nest tries it (Nest would log the error with its own stack-like line).
    await probePort(options.port ?? DEFAULT_PORT, options.host ?? '0.0.0.0');
    await app.listen(options.port ?? DEFAULT_PORT, options.host ?? '0.0.0.0');
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  const url = urlOf(app.getHttpServer().address() as AddressInfo);
  a2a?.listening(url);
  let closing: Promise<void> | undefined;
  return {
    url,
    registry: metrics.registry,
    close() {
      closing ??= (async () => {
        await streams.closeAll();
        await mcp?.close();
        await a2a?.close();
        resolved.reads.credentials?.close();
        await app.close();
        if (options.registry) metrics.close();
      })();
      return closing;
    },
  };
}
