import { AgoraError, GetTribunalStats, ListUnderCoveredProposals, projectionsQueries, RecordLogCheckpoint, VerifyReadModels } from '@agora/contracts';
import { DEFAULT_STATS_WINDOW_DAYS, statsWindow, tribunalStatsFromSums, tribunalTotalsFromSums } from '@agora/domain-tribunal';
import { votingTotalsFromSums } from '@agora/domain-voting';
import { dialecticTotalsFromSums } from '@agora/domain-dialectic';
import { debateFiguresFromSums } from '@agora/domain-debate';
import { chamberTotalsFromSums } from '@agora/domain-chamber';
import type { EventSourcingLogger, ProjectionVerification } from '@agora/eventsourcing';
import { createServiceMicroservice, onCommand, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { chamberLedgersTable, chamberRecordsTable, debatesTable, dialecticSessionsTable, proposalsTable, READ_MODEL_TABLES, underCoveredProposals, votingSessionsTable } from '@agora/read-models';
import type { SqlProjectionRunner } from '@agora/read-store';
import { DEFAULT_METRICS_HOST, DEFAULT_METRICS_PORTS, registerRemovably, serveMetrics, type Running, type ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { calibrationQuery, registerCalibrationMetrics } from './calibration-metrics.js';
import { chamberQueries, DEFAULT_CHAMBER_MIN_SAMPLE, registerChamberMetrics } from './chamber-metrics.js';
import { startLogCheckpoints, type RunningLogCheckpoints } from './log-checkpoints.js';
import { dialecticQueries, registerDialecticMetrics } from './dialectic-metrics.js';
import { registerTribunalMetrics } from './tribunal-metrics.js';
import { registerVotingMetrics, votingQueries } from './voting-metrics.js';
import { registerDebateMetrics } from './debate-metrics.js';

export const DEFAULT_METRICS_PORT = DEFAULT_METRICS_PORTS.projections;
export { DEFAULT_METRICS_HOST };

/** Queue group and `$SRV` name of the service; its subjects stay those of the query definitions (`agora.qry.tribunal.*`). */
export const PROJECTIONS_SERVICE = 'projections';

/** Its commands: VerifyReadModels (an operator's), and RecordLogCheckpoint, its own (service-only: refused on its subject). The queries this service answers: the tribunal's health figures and the reviewers' calibration, computed from the proposals read model; the voting statistics and validator agreement, from the voting sessions read model; the dialectic's success metrics and collusion flags, from the recovery sessions read model. */
export const projectionsCatalog = { commands: [VerifyReadModels, RecordLogCheckpoint], queries: [...projectionsQueries] };

export interface ProjectionsServiceOptions {
  /** Port of the HTTP endpoint with /metrics and /health. Default 9464; 0 picks a free one. */
  metricsPort?: number;
  /** Address it binds. Default 0.0.0.0 (Prometheus scrapes it from elsewhere). */
  metricsHost?: string;
  /** Window of the stats query (when the request names none) and of the windowed metrics. Default 30 days. */
  windowDays?: number;
  /** Where the read-model figures are registered and what /metrics serves. Default: the process's (`context.metrics.registry`); a second instance in one process needs its own. */
  registry?: Registry;
  /** A signed checkpoint of the whole log after this many commits (AGORA_CHECKPOINT_EVERY). Default 1000. */
  checkpointEvery?: number;
  /** ... or at least this often while commits come in, in ms (AGORA_CHECKPOINT_INTERVAL_MS). Default 60 s. */
  checkpointIntervalMs?: number;
  /** Nest's logger setting; `false` silences it and the projection runner's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** Arbitrated chamber sessions needed before the arbiter's own-provider win share is a number. Default 10. */
  chamberMinSample?: number;
}

export interface RunningProjections extends Running {
  /** `http://<host>:<port>/metrics` as bound (0.0.0.0 and :: shown as the loopback address). */
  metricsUrl: string;
  /** The proposals read model's writer (or follower) in the read side's database: the tribunal's figures are its sums. */
  proposals: SqlProjectionRunner;
  /** The voting sessions read model's writer (or follower): the voting figures are its sums. */
  voting: SqlProjectionRunner;
  /** The debates read model's writer (or follower): the debate figures are its sums. */
  debate: SqlProjectionRunner;
  /** The recovery sessions read model's writer (or follower): the dialectic's figures are its sums. */
  dialectic: SqlProjectionRunner;
  /** The chamber records' writer (or follower): the chamber's figures are its sums. */
  chamber: SqlProjectionRunner;
  service: ServiceMicroservice;
  registry: Registry;
  /** The log checkpoints this service records. */
  checkpoints: RunningLogCheckpoints;
}

const silent: EventSourcingLogger = { warn: () => undefined };

function checkedWindowDays(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > 365) throw new RangeError(`windowDays must be a whole number of days from 1 to 365, got ${String(value)}`);
  return value;
}

/**
 * The projections service: reads the tribunal's figures from the proposals read model in the read
 * side's database (its sums and timed sums, written with the proposals; see sqlAggregateViews) and
 * publishes what they say about the tribunal's health:
 * - over the transport, the `stats` and `coverage` queries of the tribunal contracts
 *   (`agora.qry.tribunal.stats`, `agora.qry.tribunal.coverage`), queue group `projections`;
 * - over HTTP, `/metrics` for Prometheus (the process's registry, `context.metrics`: default process
 *   metrics, the platform's, and the read-model figures computed at scrape time), `/health` and `/verify`.
 * Figures come from the pure functions of @agora/domain-tribunal over those sums and the real clock.
 */
export async function startProjectionsService(context: ServiceContext, options: ProjectionsServiceOptions = {}): Promise<RunningProjections> {
  const windowDays = checkedWindowDays(options.windowDays ?? DEFAULT_STATS_WINDOW_DAYS);
  const metricsPort = options.metricsPort ?? DEFAULT_METRICS_PORT;
  const metricsHost = options.metricsHost ?? DEFAULT_METRICS_HOST;
  if (!Number.isSafeInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) throw new RangeError(`metricsPort must be a port number (0 to 65535), got ${String(metricsPort)}`);

  const logger = options.logger === false ? silent : new Logger('agora:projections');
  const db = context.readSide.db;
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch((error: unknown) => console.error('closing the projections service failed', error));
  };

  try {
    // Started together, so they catch up in one shared pass over the log (sharingCatchUp).
    const started = <T,>(part: Promise<T>, close: (value: T) => Promise<void>) => part.then((value) => (closers.push(() => close(value)), value));
    const [proposals, voting, dialectic, chamber, , debate, checkpoints] = await allStarted([
      started(context.readSide.use(proposalsTable, logger), (p) => p.close()),
      started(context.readSide.use(votingSessionsTable, logger), (p) => p.close()),
      started(context.readSide.use(dialecticSessionsTable, logger), (p) => p.close()),
      started(context.readSide.use(chamberRecordsTable, logger), (p) => p.close()),
      started(context.readSide.use(chamberLedgersTable, logger), (p) => p.close()),
      started(context.readSide.use(debatesTable, logger), (p) => p.close()),
      started(
        startLogCheckpoints({
          store: context.store,
          as: context.serviceIdentity('projections'),
          logger,
          leases: context.leases,
          ...(options.checkpointEvery === undefined ? {} : { every: options.checkpointEvery }),
          ...(options.checkpointIntervalMs === undefined ? {} : { intervalMs: options.checkpointIntervalMs }),
        }),
        (p) => p.close(),
      ),
    ] as const);

    // Rebuilding every read model replays the whole log: an operator's signed command, one at a time.
    let verifying: Promise<unknown> | undefined;
    const verifyReadModels = async () => {
      if (verifying) throw new AgoraError('unavailable', 'a read-model verification is already running; retry when it is done');
      const run = verifyTables(context);
      verifying = run;
      try {
        const readModels = await run;
        return { ok: readModels.every((r) => r.equal), readModels };
      } finally {
        verifying = undefined;
      }
    };

    const service = await createServiceMicroservice({
      service: PROJECTIONS_SERVICE,
      ...context.transport,
      directory: context.directory,
      maxClockSkewMs: context.config.maxClockSkewMs,
      description: 'Agora projections: read models folded from the log; the tribunal health figures (stats, coverage)',
      catalog: projectionsCatalog,
      commands: new Map([onCommand(VerifyReadModels, () => verifyReadModels())]),
      queries: new Map([
        onQuery(GetTribunalStats, async ({ windowDays: days }) => {
          const window = statsWindow(new Date(), days ?? windowDays);
          return tribunalStatsFromSums(await proposalsTable.windowSums(db, Date.parse(window.from), Date.parse(window.to)), window);
        }),
        onQuery(ListUnderCoveredProposals, async ({ below, limit, cursor }) => {
          const { items, nextCursor } = await underCoveredProposals(db, below, { limit, cursor });
          return { proposals: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
        }),
        calibrationQuery(db),
        ...votingQueries(db),
        ...dialecticQueries(db, windowDays),
        ...chamberQueries(db, windowDays, options.chamberMinSample ?? DEFAULT_CHAMBER_MIN_SAMPLE),
      ]),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    closers.push(() => service.close());

    // The read-model figures join the process's registry (one /metrics per process), and leave it on close.
    const registry = options.registry ?? context.metrics.registry;
    const unregister = registerRemovably(registry, (r) => {
      registerTribunalMetrics(r, { db, windowDays });
      registerVotingMetrics(r, { db });
      registerCalibrationMetrics(r, { db });
      registerDialecticMetrics(r, { db, windowDays });
      registerChamberMetrics(r, { db, windowDays, minSample: options.chamberMinSample ?? DEFAULT_CHAMBER_MIN_SAMPLE });
      registerDebateMetrics(r, { db });
    });
    closers.push(async () => unregister());

    const server = await serveMetrics({
      registry,
      port: metricsPort,
      host: metricsHost,
      routes: {
        '/health': async () => {
          const count = (byStatus: Record<string, number>) => Object.values(byStatus).reduce((a, b) => a + b, 0);
          const [proposalSums, votingSums, dialecticSums, debateSums, chamberSums] = await Promise.all([proposalsTable.sums(db), votingSessionsTable.sums(db), dialecticSessionsTable.sums(db), debatesTable.sums(db), chamberRecordsTable.sums(db)]);
          const debateFigures = debateFiguresFromSums(debateSums);
          return {
            status: 200,
            body: {
              status: 'ok',
              service: PROJECTIONS_SERVICE,
              readModels: { proposals: count(tribunalTotalsFromSums(proposalSums).proposalsByStatus), votingSessions: count(votingTotalsFromSums(votingSums).sessionsByStatus), dialecticSessions: count(dialecticTotalsFromSums(dialecticSums).sessionsByStatus), chamberSessions: count(chamberTotalsFromSums(chamberSums).sessionsByStatus), debates: debateFigures.open + count(debateFigures.byOutcome) },
              position: proposals.runner.position ?? null,
            },
          };
        },
      },
    });
    closers.push(() => server.close());
    const metricsUrl = server.url;

    return {
      metricsUrl,
      proposals: proposals.runner,
      voting: voting.runner,
      dialectic: dialectic.runner,
      chamber: chamber.runner,
      debate: debate.runner,
      service,
      registry,
      checkpoints,
      lines: [
        ...(checkpoints.lines ?? []),
        `projections service ${service.id}: ${projectionsCatalog.queries.map((q) => q.subject).join(', ')} (queue group ${PROJECTIONS_SERVICE})`,
        `metrics: ${metricsUrl} (bound to ${metricsHost}:${server.port}), health: ${metricsUrl.replace(/\/metrics$/, '/health')}, read models checked against a rebuild by an operator's VerifyReadModels (agora verify-read-models); tribunal window ${windowDays} days`,
      ],
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The read models in tables (the services answer from them): each folded again from the log beside its live tables and compared, named `tables:<name>`. */
async function verifyTables(context: ServiceContext): Promise<(ProjectionVerification & { differences: string[] })[]> {
  const results: (ProjectionVerification & { differences: string[] })[] = [];
  for (const table of READ_MODEL_TABLES) {
    const part = await context.readSide.use(table);
    try {
      results.push({ ...(await part.runner.verify()), name: `tables:${table.name}` });
    } finally {
      await part.close();
    }
  }
  return results;
}

/** Like Promise.all, but rejects only once every part has settled (so each part that did start is there to be closed). */
async function allStarted<T extends readonly unknown[]>(parts: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(parts);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
