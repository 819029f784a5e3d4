import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, relative, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { processEnvironment, REPO_ROOT } from './processes.js';

/** The nats-server a run uses, where it was found, and the version it reports (undefined when it does not run). */
export interface NatsServerBinary {
  bin: string;
  /** `NATS_SERVER_BIN`, the project's cache (`npm run nats-server`), or `PATH`. */
  from: 'NATS_SERVER_BIN' | 'npm run nats-server' | 'PATH';
  version: string | undefined;
}

/** The Debian suites `npm run nats-server` fetches nats-server from (tools/nats-server/install.mjs). */
export type DebianSuite = 'unstable' | 'trixie' | 'bookworm';

/**
 * Where `npm run nats-server -- <suite>` keeps Debian's nats-server of that suite (the file may not
 * exist yet): `AGORA_NATS_CACHE`, else `.cache/nats-server` in the repository.
 */
export function cachedNatsServerBin(suite: DebianSuite, env: NodeJS.ProcessEnv = process.env, root: string = REPO_ROOT): string {
  return join(resolve(env['AGORA_NATS_CACHE']?.trim() || join(root, '.cache', 'nats-server')), suite, 'nats-server');
}

/**
 * The nats-server every test, benchmark and cluster script runs (one rule, so that a clustered run
 * never silently takes a server that cannot hold a clustered log): `NATS_SERVER_BIN` when set; else
 * the newest Debian nats-server the project fetched (`npm run nats-server`, Debian unstable's, in
 * `.cache/nats-server/unstable/`); else `nats-server` on the PATH (a user's own), else Debian's
 * `/usr/sbin/nats-server`.
 */
export function natsServerBin(env: NodeJS.ProcessEnv = process.env, root: string = REPO_ROOT): { bin: string; from: NatsServerBinary['from'] } {
  const set = env['NATS_SERVER_BIN']?.trim();
  if (set) return { bin: set, from: 'NATS_SERVER_BIN' };
  const cached = cachedNatsServerBin('unstable', env, root);
  if (existsSync(cached)) return { bin: cached, from: 'npm run nats-server' };
  for (const dir of (env['PATH'] ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'nats-server');
    try {
      accessSync(candidate, constants.X_OK);
      return { bin: candidate, from: 'PATH' };
    } catch {
      // not here
    }
  }
  return { bin: '/usr/sbin/nats-server', from: 'PATH' };
}

/** `natsServerBin()` with the version the binary reports (`nats-server --version`). */
export function resolveNatsServer(env: NodeJS.ProcessEnv = process.env, root: string = REPO_ROOT): NatsServerBinary {
  const { bin, from } = natsServerBin(env, root);
  return { bin, from, version: natsServerVersion(bin) };
}

/** The version `bin --version` reports (`2.15.1`), or undefined when it does not run. */
export function natsServerVersion(bin: string): string | undefined {
  const run = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? /v?(\d+\.\d+\.\d+\S*)/.exec(run.stdout)?.[1] : undefined;
}

/** One line naming the server a run uses: `nats-server 2.15.1 (<path>, from npm run nats-server)`. */
export function describeNatsServer(server: NatsServerBinary): string {
  return `nats-server ${server.version ?? '(does not run)'} (${server.bin}, from ${server.from})`;
}

export const NATS_SERVER_BIN = natsServerBin().bin;

export interface PrivateNatsServer {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  /** The server's process id (e.g. to make it reload its configuration: SIGHUP). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Those of `ports` that cannot be listened on at loopback right now (held by another process). */
export async function takenPorts(ports: readonly number[]): Promise<number[]> {
  const taken: number[] = [];
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) taken.push(port);
  }
  return taken;
}

/**
 * A base port such that `base + offset` is free for every offset, for a program that takes a
 * block of ports from one setting (a NATS cluster's client, route and monitoring ports, a run of
 * metrics ports). Drawn below the kernel's ephemeral range (32768 and up on Linux), where the
 * outgoing connections of other processes cannot take a port between this check and its use.
 */
export async function freePortBlock(offsets: readonly number[], range: { from: number; to: number } = { from: 10_000, to: 32_000 }): Promise<number> {
  const span = Math.max(...offsets);
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = range.from + Math.floor(Math.random() * (range.to - span - range.from));
    if ((await takenPorts(offsets.map((o) => base + o))).length === 0) return base;
  }
  throw new Error(`no free block of ports for offsets ${offsets.join(',')} in ${range.from}-${range.to}`);
}

export interface StartNatsOptions {
  /**
   * A configuration file (e.g. deploy/nats/single.conf), used as it is but for its address, ports
   * and store directory, which are the test's own so the server stays private to it.
   */
  config?: string;
  /** Environment of the server on top of this process's (the `$VARIABLES` a config file names). */
  env?: Record<string, string>;
  /** How long the server may take to say it is ready (default 10 s). */
  timeoutMs?: number;
  /** The client port (default: a free one), e.g. to start a server a process is already waiting for. */
  port?: number;
  /** More nats-server arguments (without `config`), e.g. `--user`/`--pass`. */
  args?: readonly string[];
  /** JetStream on (default); false for a server that answers clients but serves no JetStream (without `config`). */
  jetstream?: boolean;
}

/**
 * A NATS server with JetStream of this test file's own, on a free loopback port with its own store
 * directory. Tests that run Agora's real services need one: on the shared server, every `registry`
 * (or `tribunal`...) replica of every test run joins the same queue group and would take some of
 * the others' requests. With `config`, the server runs that configuration file (users,
 * permissions) on its own ports.
 */
export async function startNatsServer(options: StartNatsOptions = {}): Promise<PrivateNatsServer> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'agora-test-nats-'));
  let args = ['-a', '127.0.0.1', '-p', String(port), ...(options.jetstream === false ? [] : ['-js', '-sd', dir]), ...(options.args ?? [])];
  if (options.config) {
    // The file as it is, included from a wrapper that moves it to private ports and store (a
    // store directory on the command line would clash with the file's own).
    const wrapper = join(dir, 'server.conf');
    writeFileSync(
      wrapper,
      `include "${relative(dir, resolve(options.config))}"\nlisten: "127.0.0.1:${port}"\nhttp: "127.0.0.1:${await freePort()}"\njetstream { store_dir: "${join(dir, 'store')}" }\n`,
    );
    args = ['-c', wrapper];
  }
  const server = await spawnUntilReady(NATS_SERVER_BIN, args, { ...process.env, ...options.env }, timeoutMs).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: server.pid,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts `bin` and resolves once it says `Server is ready`; `stop()` ends it (SIGTERM) and waits for its exit. */
async function spawnUntilReady(bin: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} was not ready within ${timeoutMs} ms:\n${log}`)), timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${bin} (set NATS_SERVER_BIN): ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited with code ${code}:\n${log}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

export interface PrivateNatsCluster {
  /** The nodes' client URLs, `nats://127.0.0.1:<port>` each. */
  readonly urls: string[];
  /** The version the nodes' binary reports. */
  readonly version: string | undefined;
  stop(): Promise<void>;
}

/**
 * A NATS cluster of this test file's own: `nodes` nats-servers (default 3) routed to each other on
 * loopback, JetStream on each with a private store, resolved once JetStream answers (its meta
 * leader is elected). `bin` defaults to the one `natsServerBin()` finds; a test of an older server
 * names it.
 */
export async function startNatsCluster(options: { bin?: string; nodes?: number; timeoutMs?: number } = {}): Promise<PrivateNatsCluster> {
  // A new 2.10.27 cluster has been seen never to place a stream on every peer (30 s of "no suitable
  // peers for placement"): such a cluster is stopped and a new one started, once.
  try {
    return await startNatsClusterOnce(options);
  } catch (error) {
    if (!(error instanceof ClusterNotReady)) throw error;
    console.warn(`${error.message}: starting a new cluster`);
    return startNatsClusterOnce(options);
  }
}

/** A cluster whose nodes started but whose JetStream did not place a stream on every peer in time. */
class ClusterNotReady extends Error {}

async function startNatsClusterOnce(options: { bin?: string; nodes?: number; timeoutMs?: number }): Promise<PrivateNatsCluster> {
  const bin = options.bin ?? NATS_SERVER_BIN;
  const count = options.nodes ?? 3;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const offsets = Array.from({ length: count }, (_, i) => [i, 1000 + i]).flat();
  const base = await freePortBlock(offsets);
  const dir = mkdtempSync(join(tmpdir(), 'agora-test-nats-cluster-'));
  const nodes = Array.from({ length: count }, (_, i) => ({ name: `n${i + 1}`, client: base + i, route: base + 1000 + i }));
  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      nodes.map(async (node) => {
        const store = join(dir, node.name);
        mkdirSync(store);
        const conf = join(store, 'node.conf');
        const routes = nodes.map((o) => `nats-route://127.0.0.1:${o.route}`).join(', ');
        writeFileSync(conf, `server_name: ${node.name}\nlisten: 127.0.0.1:${node.client}\njetstream { store_dir: ${JSON.stringify(store)} }\ncluster {\n  name: agora-test\n  listen: 127.0.0.1:${node.route}\n  routes: [${routes}]\n}\n`);
        started.push(await spawnUntilReady(bin, ['-c', conf], process.env, timeoutMs));
      }),
    );
    const urls = nodes.map((node) => `nats://127.0.0.1:${node.client}`);
    await jetStreamAnswers(urls, count, timeoutMs);
    return { urls, version: natsServerVersion(bin), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Resolves once the cluster's JetStream places a stream on `replicas` peers (a new cluster elects its
 * meta leader first, and answers an account request before every peer can take a replica: a stream
 * made then is refused "no suitable peers for placement"). The probe stream is deleted.
 */
async function jetStreamAnswers(urls: string[], replicas: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  const nc = await connect({ servers: urls });
  try {
    for (;;) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.getAccountInfo();
        await jsm.streams.add({ name: 'AGORA_TEST_PLACEMENT', subjects: ['agora-test-placement'], num_replicas: replicas });
        await jsm.streams.delete('AGORA_TEST_PLACEMENT');
        return;
      } catch (error) {
        if (Date.now() > until) throw new ClusterNotReady(`the NATS cluster's JetStream did not answer within ${timeoutMs} ms: ${error instanceof Error ? error.message : String(error)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await nc.close();
  }
}

/**
 * Runs a cluster program (`tools/cluster/<name>.mjs`: it starts three clustered nats-server nodes
 * and Agora's built processes) to its end, with the NATS nodes on a block of free ports of its own
 * (client n, routes n+2000, monitoring n+4000, below the ephemeral range) and the `env` given:
 * its exit code and output (stdout and stderr interleaved). One still running after `timeoutMs`
 * gets Ctrl-C, which stops what it started, and the returned promise rejects.
 */
export async function runClusterProgram(script: string, args: readonly string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const base = await freePortBlock([0, 1, 2, 2000, 2001, 2002, 4000, 4001, 4002], { from: 10_000, to: 24_000 });
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: processEnvironment({ AGORA_CLUSTER_NATS_PORT: String(base), ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  if (child.signalCode === 'SIGINT' || code === 130) throw new Error(`${script} ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${output}`);
  return { code, output };
}

/**
 * The error for a cluster program's run that printed no result line: its last lines first (where the
 * program says why it stopped; a long output is often shown cut in the middle), then the whole output.
 */
export function clusterRunFailure(what: string, run: { code: number | null; output: string }): Error {
  const lines = run.output.trimEnd().split('\n');
  return new Error(`${what} printed no result (exit code ${run.code}); its last lines:\n${lines.slice(-12).join('\n')}\n\nthe whole output:\n${run.output}`);
}
