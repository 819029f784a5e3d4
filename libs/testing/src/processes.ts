// Starts Agora's processes the way an operator does: separate OS processes, settings in the
// environment, run from source through tools/ts-run so the tests need no build (or from the build
// npm test has just made: sourceArgs).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/nats-core';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The SDK's name on the npm registry (tools/sdk-pack.mjs publishes it under it), which the docs' examples import. */
export const PUBLISHED_SDK = 'agora-governance-sdk';

/** The first TypeScript block of `docs/<page>`'s section `## <section>`, as written. */
export function docsExample(page: string, section: string): string {
  const example = new RegExp(`\n## ${section}\n[\\s\\S]*?\`\`\`ts\n([\\s\\S]*?)\`\`\``).exec(readFileSync(join(REPO_ROOT, 'docs', page), 'utf8'))?.[1];
  if (example === undefined) throw new Error(`docs/${page}'s section ${section} shows no TypeScript example`);
  return example;
}

/** A docs example as the workspace runs it (with `--conditions=agora-source`): its imports of the published SDK name `@agora/sdk`. */
export function workspaceExample(source: string): string {
  return source.replaceAll(`'${PUBLISHED_SDK}'`, "'@agora/sdk'");
}

/**
 * A docs line `npm run agora -- <args>` as a shell command (for `/bin/sh -c`) that runs the same CLI from
 * any directory, as the line runs from the repository's root: its sources, or its build under npm test
 * (sourceArgs). The arguments stay as written, so the shell reads their quotes as a reader's shell would.
 */
export function agoraCommandLine(line: string): string {
  const prefix = 'npm run agora -- ';
  if (!line.startsWith(prefix)) throw new Error(`not an agora line: ${line}`);
  const node = [process.execPath, ...sourceArgs('apps/cli/src/main.ts').map((arg) => (arg.startsWith('-') ? arg : resolve(REPO_ROOT, arg)))];
  return `${node.map((arg) => `'${arg}'`).join(' ')} ${line.slice(prefix.length)}`;
}

/**
 * The built entry point of an app (`apps/<app>/dist/main.js`), for a test of what a user runs after
 * `npm run build` (npm test builds before its stages). A test never builds it itself: it fails saying so.
 */
export function builtEntry(app: string): string {
  const entry = join(REPO_ROOT, 'apps', app, 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
  return entry;
}

/**
 * `node` arguments that run a TypeScript entry point (`<package>/src/x.ts`, from the repository's
 * root or absolute): from source, or its built file (`<package>/dist/x.js`) when the run says the
 * build is of this tree (AGORA_TEST_BUILT=1: npm test sets it once its build step passed). A built
 * process starts in about half the time; a test run alone, after an edit, runs the sources.
 */
export function sourceArgs(entry: string): string[] {
  const built = process.env['AGORA_TEST_BUILT'] === '1' ? builtCounterpart(entry) : undefined;
  return built === undefined ? ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', entry] : [built];
}

function builtCounterpart(entry: string): string | undefined {
  const match = /^(.*)\/src\/(.+)\.ts$/.exec(entry);
  if (!match) return undefined;
  const built = resolve(REPO_ROOT, `${match[1]}/dist/${match[2]}.js`);
  return existsSync(built) ? built : undefined;
}

/**
 * A clean environment: only what node needs, the nats-server the run uses (NATS_SERVER_BIN, when
 * set), plus the settings given (nothing else leaks in from the test runner's). METRICS_PORT is 0
 * unless given (any free port, printed at start), so that tests running at once do not fight over
 * the processes' default metrics ports. AGORA_READS is `open` unless given: most tests read their
 * gateway without a token, while the processes close reads by default; a test of closed reads
 * says `AGORA_READS: 'closed'` (or `''` for the processes' own default).
 */
export function processEnvironment(env: Record<string, string>): NodeJS.ProcessEnv {
  const natsServerBin = process.env['NATS_SERVER_BIN'] ? { NATS_SERVER_BIN: process.env['NATS_SERVER_BIN'] } : {};
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', NO_COLOR: '1', METRICS_PORT: '0', AGORA_READS: 'open', ...natsServerBin, ...env };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a process to completion (`--help`, a bad setting): exit code and output. */
export function runToCompletion(entry: string, args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  return runCommand(process.execPath, [...sourceArgs(entry), ...args], { env, timeoutMs });
}

/**
 * Runs any command to completion (`npm pack`, `tsc`, the built `agora`) in `cwd` (the repository
 * unless given), in a clean environment plus `env`, with `input` on its standard input when given.
 */
export function runCommand(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; input?: string } = {}): Promise<Finished> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? REPO_ROOT, env: processEnvironment(options.env ?? {}), stdio: ['pipe', 'pipe', 'pipe'] });
    // A command that exits without reading its input is no failure of the run.
    child.stdin.on('error', () => undefined).end(options.input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

export interface AgoraProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr interleaved). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. Resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL: a crash. Resolves once it is gone. */
  kill(): Promise<void>;
}

const live = new Set<ChildProcess>();
// Should the test runner go away without afterAll (a crash, a timeout), take the children along.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Starts an Agora process (`name` is how it prefixes its log lines, e.g. `agora-registry`) and
 * resolves once it has printed `<name>: ready`; rejects (and kills it) if it exits or stays silent first.
 */
export function startAgoraProcess(entry: string, name: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<AgoraProcess> {
  const child = spawn(process.execPath, sourceArgs(entry), { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let output = '';
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', () => {
      live.delete(child);
      resolveExit();
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async (graceMs = 5_000) => {
    if (gone()) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    if (gone()) return;
    child.kill('SIGKILL');
    await exited;
  };
  const ready = new RegExp(`^${name}: ready$`, 'm');
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} ${why}; its output:\n${output}`));
    };
    const timer = setTimeout(() => fail(`printed no "ready" within ${readyTimeoutMs} ms`), readyTimeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (!settled && ready.test(output)) {
        settled = true;
        clearTimeout(timer);
        resolvePromise({ child, output: () => output, stop, kill });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

export interface ServiceProcess extends AgoraProcess {
  /** Its replica id in `$SRV` (read off its start-up line `<service> service <id>: ...`). */
  readonly id: string;
}

/** Starts `apps/<service>/src/main.ts` as `agora-<service>` and resolves once it is ready and has named its replica id. */
export async function startServiceProcess(service: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const started = await startAgoraProcess(`apps/${service}/src/main.ts`, `agora-${service}`, env, readyTimeoutMs);
  const id = new RegExp(`${service} service (\\S+):`).exec(started.output())?.[1];
  if (id === undefined) {
    await started.kill();
    throw new Error(`agora-${service} was ready without naming its replica id; its output:\n${started.output()}`);
  }
  return { ...started, id };
}

/** Every answer to a `$SRV` request within `maxWaitMs` (discovery is scatter-gather: each replica answers). */
export async function gatherServiceReplies<T>(nc: NatsConnection, subject: string, maxWaitMs = 1_000): Promise<T[]> {
  const replies: T[] = [];
  for await (const msg of await nc.requestMany(subject, '', { strategy: 'timer', maxWait: maxWaitMs })) replies.push(msg.json<T>());
  return replies;
}

/**
 * Fails plainly when replicas other than `ids` answer for `service` on this NATS server: they would
 * take some of the test's requests (a test should run its services on a server of its own, see startNatsServer).
 */
export async function expectOnlyReplicas(nc: NatsConnection, service: string, ids: readonly string[]): Promise<void> {
  const foreign = (await gatherServiceReplies<{ id: string }>(nc, `$SRV.PING.${service}`, 500)).map((p) => p.id).filter((id) => !ids.includes(id));
  if (foreign.length > 0) throw new Error(`other ${service} replicas (${foreign.join(', ')}) serve the "${service}" queue group on this NATS server; this test needs it to itself`);
}
