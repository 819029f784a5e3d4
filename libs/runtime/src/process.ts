import { Logger } from '@nestjs/common';
import { ConfigError } from './config-error.js';
import { metricsEnvHelp, readRuntimeConfig, RUNTIME_ENV_HELP, type RuntimeConfig } from './config.js';
import { openServiceContext, type ServiceContext } from './context.js';
import { DEFAULT_NATS_WAIT_MS, describeStartupFailure, waitForNats, waitForStore } from './startup.js';
import { serveMetrics } from './metrics-server.js';
import { startTracing, TRACING_ENV_HELP, TracingConfigError, type Tracing } from '@agora/tracing';

/** What a started process part (a service, the gateway, the relay) hands back. */
export interface Running {
  /** Lines for the start-up log: where it listens, what it serves. */
  lines?: string[];
  close(): Promise<void>;
}

export interface ProcessSpec {
  /** Process name, for logs (`agora-registry`). */
  name: string;
  /** One paragraph: what the process does. */
  summary: string;
  /** Settings of this process beyond the shared ones, formatted like RUNTIME_ENV_HELP. */
  env?: string;
  /** Standalone mode runs in-process unless NATS_URL is set; a service process always uses NATS. */
  natsByDefault: boolean;
  /**
   * Default METRICS_PORT (see DEFAULT_METRICS_PORTS; 0 = any free port, shown in the start-up log).
   * The process serves the registry of `context.metrics` there: `/metrics` and `/health`.
   */
  metricsPort?: number;
  /** The process's parts serve `context.metrics.registry` on `config.metrics` themselves (the projections, with /verify). */
  servesMetrics?: boolean;
  /** The settings of the ports the process's parts listen on (`{ PORT: 8080 }`; METRICS_PORT is known already), named when one is in use. */
  ports?(): Record<string, number>;
  /** Called once the config is read (before the store opens), e.g. to create a missing operator key. */
  prepare?(config: RuntimeConfig): RuntimeConfig;
  start(context: ServiceContext): Promise<Running>;
}

function helpOf(spec: ProcessSpec): string {
  const shared = `${metricsEnvHelp(spec.metricsPort ?? 0)}\n${RUNTIME_ENV_HELP}\n${TRACING_ENV_HELP}`;
  const env = spec.env ? `${spec.env}\n${shared}` : shared;
  return `Usage: ${spec.name} [--help]\n\n${spec.summary}\n\nEnvironment:\n${env.replace(/^/gm, '  ')}\n`;
}

/**
 * The life of an Agora process: `--help`; settings read and checked (a bad one stops the process
 * with exit code 2 and says which); store and transport opened; the process's parts started;
 * where it listens printed; SIGINT/SIGTERM close everything in reverse order.
 */
export async function runProcess(spec: ProcessSpec, argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpOf(spec));
    return;
  }
  const unknown = argv.filter((a) => a !== '--');
  if (unknown.length > 0) {
    process.stderr.write(`${spec.name}: unknown argument ${unknown[0]}; settings come from the environment (see --help)\n`);
    process.exitCode = 2;
    return;
  }
  let config: RuntimeConfig;
  try {
    config = readRuntimeConfig(env, { natsByDefault: spec.natsByDefault, metricsPort: spec.metricsPort ?? 0 });
    if (spec.prepare) config = spec.prepare(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${spec.name}: ${error.message}\n(see ${spec.name} --help)\n`);
    process.exitCode = 2;
    return;
  }
  Logger.overrideLogger(config.logLevels ?? ['fatal', 'error', 'warn']);
  const log = (line: string) => process.stdout.write(`${spec.name}: ${line}\n`);
  // Traces (OTEL_*): off unless asked for; then the SDK is loaded before anything that makes spans.
  let tracing: Tracing | undefined;
  try {
    tracing = await startTracing(spec.name, env);
  } catch (error) {
    if (!(error instanceof TracingConfigError)) throw error;
    process.stderr.write(`${spec.name}: ${error.message}\n(see ${spec.name} --help)\n`);
    process.exitCode = 2;
    return;
  }
  let context: ServiceContext | undefined;
  let running: Running;
  try {
    // NATS first (the transport and a JetStream store both need it): wait for it rather than fail.
    for (const servers of new Set([config.natsUrl, config.store.kind === 'jetstream' ? config.store.servers : undefined])) {
      if (servers !== undefined) await waitForNats(servers, { limitMs: config.natsWaitMs ?? DEFAULT_NATS_WAIT_MS, log, ...(config.natsCredentials === undefined ? {} : { credentials: config.natsCredentials }) });
    }
    // A reachable NATS node may not serve JetStream yet (just started again, catching up with its
    // cluster): wait for the store as for NATS.
    // The agent directory catches up in the same pass over the log as the parts (each waits for it where it reads it).
    const opened = await waitForStore(() => openServiceContext(config, { awaitDirectory: false }), { limitMs: config.natsWaitMs ?? DEFAULT_NATS_WAIT_MS, log });
    context = opened;
    running = await startAll([
      () => spec.start(opened),
      async () => {
        if (spec.servesMetrics || !config.metrics) return { close: async () => undefined };
        const server = await serveMetrics({ registry: opened.metrics.registry, ...config.metrics });
        return { lines: [`metrics: ${server.url} (bound to ${config.metrics.host}:${server.port}), health: ${server.url.replace(/\/metrics$/, '/health')}`], close: () => server.close() };
      },
      // Ready once the agent directory has caught up too.
      async () => {
        await opened.registry.caughtUp;
        return { close: async () => undefined };
      },
    ]);
  } catch (error) {
    await context?.close();
    await tracing?.shutdown();
    const line = describeStartupFailure(error, { ...spec.ports?.(), ...(config.metrics === undefined ? {} : { METRICS_PORT: config.metrics.port }) });
    if (line === undefined) throw error;
    process.stderr.write(`${spec.name}: ${line}\n`);
    process.exit(2);
  }
  for (const line of [...context.describe(), ...(running.lines ?? []), ...(tracing ? [tracing.line] : [])]) log(line);
  log('ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}, stopping`);
    try {
      await running.close();
      await context.close();
      // The spans still buffered go out before the process does.
      await tracing?.shutdown();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

/** Starts parts one after another; if one fails, those already started are closed. Closes in reverse order. */
export async function startAll(parts: readonly (() => Promise<Running>)[]): Promise<Running> {
  const started: Running[] = [];
  try {
    for (const start of parts) started.push(await start());
  } catch (error) {
    for (const part of started.reverse()) await part.close().catch(() => undefined);
    throw error;
  }
  return together(started);
}

/**
 * Starts parts at the same time (services that do not need each other to start): their read
 * models catch up in one shared pass over the log (sharingCatchUp) instead of one pass each. If
 * one fails, the others are closed once started. Lines in the parts' order; closes in reverse order.
 */
export async function startTogether(parts: readonly (() => Promise<Running>)[]): Promise<Running> {
  const results = await Promise.allSettled(parts.map((start) => start()));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    for (const part of started.reverse()) await part.close().catch(() => undefined);
    throw failed.reason;
  }
  return together(started);
}

function together(started: Running[]): Running {
  return {
    lines: started.flatMap((p) => p.lines ?? []),
    async close() {
      for (const part of [...started].reverse()) await part.close().catch((error: unknown) => console.error('closing failed', error));
    },
  };
}
