import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dialecticProjectionQueries, GetTribunalStats, ListUnderCoveredProposals, votingProjectionQueries } from '@agora/contracts';
import { constitutionalCoverage, DEFAULT_STATS_WINDOW_DAYS, tribunalStats } from '@agora/domain-tribunal';
import { ProjectionRunner, type EventSourcingLogger } from '@agora/eventsourcing';
import { createServiceMicroservice, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { proposalsProjection, type ProposalsModel } from '@agora/read-models';
import type { Running, ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerDialecticMetrics, startDialecticProjections, type DialecticProjections } from './dialectic-metrics.js';
import { registerTribunalMetrics } from './tribunal-metrics.js';
import { registerVotingMetrics, startVotingProjections, type VotingProjections } from './voting-metrics.js';

export const DEFAULT_METRICS_PORT = 9464;
export const DEFAULT_METRICS_HOST = '0.0.0.0';

/** Queue group and `$SRV` name of the service; its subjects stay those of the query definitions (`agora.qry.tribunal.*`). */
export const PROJECTIONS_SERVICE = 'projections';

/** The queries this service answers: the tribunal's health figures, computed from the proposals read model; the voting statistics and validator agreement, from the voting sessions read model; the dialectic's success metrics and collusion flags, from the recovery sessions read model. */
export const projectionsCatalog = { commands: [], queries: [GetTribunalStats, ListUnderCoveredProposals, ...votingProjectionQueries, ...dialecticProjectionQueries] };

export interface ProjectionsServiceOptions {
  /** Port of the HTTP endpoint with /metrics and /health. Default 9464; 0 picks a free one. */
  metricsPort?: number;
  /** Address it binds. Default 0.0.0.0 (Prometheus scrapes it from elsewhere). */
  metricsHost?: string;
  /** Window of the stats query (when the request names none) and of the windowed metrics. Default 30 days. */
  windowDays?: number;
  /** Nest's logger setting; `false` silences it and the projection runner's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
}

export interface RunningProjections extends Running {
  /** `http://<host>:<port>/metrics` as bound (0.0.0.0 and :: shown as the loopback address). */
  metricsUrl: string;
  runner: ProjectionRunner<ProposalsModel>;
  /** The voting sessions read model, its queries and metrics. */
  voting: VotingProjections;
  /** The recovery sessions read model, its queries and metrics. */
  dialectic: DialecticProjections;
  service: ServiceMicroservice;
  registry: Registry;
}

const silent: EventSourcingLogger = { warn: () => undefined };

function checkedWindowDays(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > 365) throw new RangeError(`windowDays must be a whole number of days from 1 to 365, got ${String(value)}`);
  return value;
}

function urlHost(address: AddressInfo): string {
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

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The projections service: keeps the proposals read model in memory (folded from the whole log at
 * start, then live; see ProjectionRunner) and publishes what it says about the tribunal's health:
 * - over the transport, the `stats` and `coverage` queries of the tribunal contracts
 *   (`agora.qry.tribunal.stats`, `agora.qry.tribunal.coverage`), queue group `projections`;
 * - over HTTP, `/metrics` for Prometheus (a registry of its own: default process metrics and the
 *   tribunal metrics, computed at scrape time) and `/health`.
 * Figures come from the pure functions of @agora/domain-tribunal over the live model and the real clock.
 */
export async function startProjectionsService(context: ServiceContext, options: ProjectionsServiceOptions = {}): Promise<RunningProjections> {
  const windowDays = checkedWindowDays(options.windowDays ?? DEFAULT_STATS_WINDOW_DAYS);
  const metricsPort = options.metricsPort ?? DEFAULT_METRICS_PORT;
  const metricsHost = options.metricsHost ?? DEFAULT_METRICS_HOST;
  if (!Number.isSafeInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) throw new RangeError(`metricsPort must be a port number (0 to 65535), got ${String(metricsPort)}`);

  const logger = options.logger === false ? silent : new Logger('agora:projections');
  const runner = new ProjectionRunner(context.store, proposalsProjection, { logger });
  const records = () => runner.model.values();
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch((error: unknown) => console.error('closing the projections service failed', error));
  };

  try {
    await runner.start();
    closers.push(() => runner.stop());
    const voting = await startVotingProjections(context.store, logger);
    closers.push(() => voting.close());
    const dialectic = await startDialecticProjections(context.store, logger, windowDays);
    closers.push(() => dialectic.close());

    const service = await createServiceMicroservice({
      service: PROJECTIONS_SERVICE,
      ...context.transport,
      directory: context.directory,
      maxClockSkewMs: context.config.maxClockSkewMs,
      description: 'Agora projections: read models folded from the log; the tribunal health figures (stats, coverage)',
      catalog: projectionsCatalog,
      commands: new Map(),
      queries: new Map([
        onQuery(GetTribunalStats, async ({ windowDays: days }) => tribunalStats([...records()], new Date(), days ?? windowDays)),
        onQuery(ListUnderCoveredProposals, async ({ below }) => ({ proposals: constitutionalCoverage([...records()], below) })),
        ...voting.queries,
        ...dialectic.queries,
      ]),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    closers.push(() => service.close());

    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    registerTribunalMetrics(registry, { records, windowDays });
    registerVotingMetrics(registry, { records: voting.records });
    registerDialecticMetrics(registry, { records: dialectic.records, windowDays });

    const server = createServer((req, res) => void answer(req, res));
    const answer = async (req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      try {
        if (path !== '/metrics' && path !== '/health' && path !== '/verify') {
          res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: try /metrics, /health or /verify\n');
          return;
        }
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
          return;
        }
        if (path === '/metrics') {
          const body = await registry.metrics();
          res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
          return;
        }
        if (path === '/verify') {
          // On demand: every read model rebuilt from scratch and compared with the live one at the same event.
          const results = await Promise.all([runner.verify(), voting.runner.verify(), dialectic.runner.verify()]);
          const ok = results.every((r) => r.equal);
          res.writeHead(ok ? 200 : 500, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : JSON.stringify({ ok, readModels: results }));
          return;
        }
        const health = { status: 'ok', service: PROJECTIONS_SERVICE, readModels: { proposals: runner.model.size, votingSessions: voting.runner.model.size, dialecticSessions: dialectic.runner.model.size }, position: runner.position ?? null };
        res.writeHead(200, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : JSON.stringify(health));
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${(error as Error).message}\n`);
      }
    };
    const address = await listen(server, metricsPort, metricsHost);
    closers.push(() => closeServer(server));
    const metricsUrl = `http://${urlHost(address)}:${address.port}/metrics`;

    return {
      metricsUrl,
      runner,
      voting,
      dialectic,
      service,
      registry,
      lines: [
        `projections service ${service.id}: ${projectionsCatalog.queries.map((q) => q.subject).join(', ')} (queue group ${PROJECTIONS_SERVICE})`,
        `metrics: ${metricsUrl} (bound to ${metricsHost}:${address.port}), health: ${metricsUrl.replace(/\/metrics$/, '/health')}, read models checked against a rebuild: ${metricsUrl.replace(/\/metrics$/, '/verify')}; tribunal window ${windowDays} days`,
      ],
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
