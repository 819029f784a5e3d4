import { Logger } from '@nestjs/common';
import { ConfigError, readRuntimeConfig, RUNTIME_ENV_HELP, type RuntimeConfig } from './config.js';
import { openServiceContext, type ServiceContext } from './context.js';

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
  /** Called once the config is read (before the store opens), e.g. to create a missing operator key. */
  prepare?(config: RuntimeConfig): RuntimeConfig;
  start(context: ServiceContext): Promise<Running>;
}

function helpOf(spec: ProcessSpec): string {
  const env = spec.env ? `${spec.env}\n${RUNTIME_ENV_HELP}` : RUNTIME_ENV_HELP;
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
    config = readRuntimeConfig(env, { natsByDefault: spec.natsByDefault });
    if (spec.prepare) config = spec.prepare(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${spec.name}: ${error.message}\n(see ${spec.name} --help)\n`);
    process.exitCode = 2;
    return;
  }
  Logger.overrideLogger(config.logLevels ?? ['fatal', 'error', 'warn']);
  const log = (line: string) => process.stdout.write(`${spec.name}: ${line}\n`);
  const context = await openServiceContext(config);
  let running: Running;
  try {
    running = await spec.start(context);
  } catch (error) {
    await context.close();
    throw error;
  }
  for (const line of [...context.describe(), ...(running.lines ?? [])]) log(line);
  log('ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}, stopping`);
    try {
      await running.close();
      await context.close();
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
  return {
    lines: started.flatMap((p) => p.lines ?? []),
    async close() {
      for (const part of [...started].reverse()) await part.close().catch((error: unknown) => console.error('closing failed', error));
    },
  };
}
