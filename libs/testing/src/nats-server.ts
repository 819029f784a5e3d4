import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

export interface PrivateNatsServer {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
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

/** True when every port in `ports` can be listened on at loopback right now. */
async function portsFree(ports: readonly number[]): Promise<boolean> {
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
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
    if (await portsFree(offsets.map((o) => base + o))) return base;
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
  const child = spawn(NATS_SERVER_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...options.env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${NATS_SERVER_BIN} was not ready within ${timeoutMs} ms:\n${log}`)), timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${NATS_SERVER_BIN} (set NATS_SERVER_BIN): ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${NATS_SERVER_BIN} exited with code ${code}:\n${log}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
