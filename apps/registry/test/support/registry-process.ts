// Starts the registry the way an operator does: a separate OS process (`agora-registry`), its
// settings in the environment, run from source through tools/ts-run so the test needs no build.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/nats-core';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const NODE_ARGS = ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'apps/registry/src/main.ts'];

/** A clean environment: only what node needs, plus the settings given (nothing leaks in from the test runner's). */
function environment(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', NO_COLOR: '1', ...env };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the registry to completion (`--help`, a bad setting): exit code and output. */
export function runRegistry(args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Finished> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd: REPO_ROOT, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agora-registry ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}${stderr}`));
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

export interface RegistryProcess {
  readonly child: ChildProcess;
  /** Its replica id in `$SRV` (read off its start-up log). */
  readonly id: string;
  /** Everything it printed so far (stdout and stderr interleaved). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. Resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();
// Should the test runner go away without afterAll (a crash, a timeout), take the children along.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts one registry process and resolves once it has printed `ready`; rejects (and kills it) if it exits or stays silent first. */
export function startRegistryProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RegistryProcess> {
  const child = spawn(process.execPath, NODE_ARGS, { cwd: REPO_ROOT, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let output = '';
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', () => {
      live.delete(child);
      resolveExit();
    }),
  );
  const stop = async (graceMs = 5_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolvePromise, reject) => {
    let id: string | undefined;
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`agora-registry ${why}; its output:\n${output}`));
    };
    const timer = setTimeout(() => fail(`printed no "ready" within ${readyTimeoutMs} ms`), readyTimeoutMs);
    const onData = (chunk: string) => {
      output += chunk;
      id ??= /registry service (\S+):/.exec(output)?.[1];
      if (/^agora-registry: ready$/m.test(output)) {
        clearTimeout(timer);
        if (id === undefined) return fail('was ready without naming its replica id');
        resolvePromise({ child, id, output: () => output, stop });
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

/** Every answer to a `$SRV` request within `maxWaitMs` (discovery is scatter-gather: each replica answers). */
export async function gatherServiceReplies<T>(nc: NatsConnection, subject: string, maxWaitMs = 1_000): Promise<T[]> {
  const replies: T[] = [];
  for await (const msg of await nc.requestMany(subject, '', { strategy: 'timer', maxWait: maxWaitMs })) replies.push(msg.json<T>());
  return replies;
}

/**
 * The NATS server is shared: a registry another test (or another engineer) runs at the same time
 * joins the same queue group and would take some of our requests. Say so plainly instead of
 * failing later with replies from a registry that knows none of our agents.
 */
export async function expectOnlyReplicas(nc: NatsConnection, ids: readonly string[]): Promise<void> {
  const foreign = (await gatherServiceReplies<{ id: string }>(nc, '$SRV.PING.registry', 500)).map((p) => p.id).filter((id) => !ids.includes(id));
  if (foreign.length > 0) {
    throw new Error(`other registry replicas (${foreign.join(', ')}) serve the "registry" queue group on this NATS server; this test needs it to itself (is another test run going on?)`);
  }
}
