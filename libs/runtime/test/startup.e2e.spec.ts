// Start-up as an operator meets it: real processes, a real nats-server, the failures one can fix
// each said in one line with exit code 2, never a stack trace.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { generateKeyPair } from '@agora/identity';
import {
  freePort,
  natsServerVersion,
  processEnvironment,
  REPO_ROOT,
  runToCompletion,
  sourceArgs,
  startAgoraProcess,
  startNatsCluster,
  startNatsServer,
  uniqueJetStreamLog,
  waitFor,
  type AgoraProcess,
  type PrivateNatsServer,
} from '@agora/testing';
import { clusteredLogRefusal } from '@agora/eventstore';

const REGISTRY = 'apps/registry/src/main.ts';
/** Debian's nats-server (2.9.10), older than 2.9.21 (nats-io/nats-server#4320): it cannot hold a clustered log. */
const DEBIAN_NATS = '/usr/sbin/nats-server';
const debianVersion = natsServerVersion(DEBIAN_NATS);
const debianUnfixed = debianVersion !== undefined && clusteredLogRefusal(debianVersion, 3, 'x') !== undefined;
const GATEWAY = 'apps/gateway/src/main.ts';
const root = generateKeyPair();

/** One line on stderr, naming `what`, and no stack trace. */
function expectOneLine(stderr: string, what: RegExp): void {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe('process start-up (e2e)', () => {
  let nats: PrivateNatsServer;
  const dirs: string[] = [];
  const started: AgoraProcess[] = [];
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agora-startup-e2e-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    nats = await startNatsServer();
  }, 30_000);

  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
    await nats?.stop();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }, 30_000);

  it('a service on NATS with no EVENT_STORE refuses to start and names the setting', async () => {
    const run = await runToCompletion(REGISTRY, [], { NATS_URL: nats.url, AGORA_DATA_DIR: await tempDir(), AGORA_OPERATOR_PUBLIC_KEY: root.publicKey });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agora-registry: EVENT_STORE is not set: a process on NATS .* must name the shared event store/);
    expect(run.stdout).not.toContain('ready');
  }, 60_000);

  it('NATS unreachable past AGORA_NATS_WAIT_MS: a line per attempt with a growing pause, then one line and exit code 2', async () => {
    const port = await freePort();
    const run = await runToCompletion(REGISTRY, [], { NATS_URL: `nats://127.0.0.1:${port}`, EVENT_STORE: 'jetstream', AGORA_DATA_DIR: await tempDir(), AGORA_NATS_WAIT_MS: '1500' });
    expect(run.code).toBe(2);
    const waits = run.stdout.split('\n').filter((l) => l.startsWith(`agora-registry: waiting for NATS at nats://127.0.0.1:${port}`));
    expect(waits.length).toBeGreaterThanOrEqual(2);
    const pauses = waits.map((l) => Number(/next in (\d+) ms/.exec(l)![1]));
    expect(pauses[1]).toBeGreaterThan(pauses[0]!);
    expectOneLine(run.stderr, /^agora-registry: NATS at nats:\/\/127\.0\.0\.1:\d+ is unreachable .*gave up after \d+ s \(AGORA_NATS_WAIT_MS=1500\)$/);
  }, 60_000);

  it('a process started before NATS waits for it and then starts', async () => {
    const port = await freePort();
    const dir = await tempDir();
    const log = uniqueJetStreamLog('startup', `nats://127.0.0.1:${port}`);
    const env = { NATS_URL: `nats://127.0.0.1:${port}`, EVENT_STORE: log.eventStore, AGORA_DATA_DIR: dir, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey };
    const child = spawn(process.execPath, sourceArgs(REGISTRY), { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let late: PrivateNatsServer | undefined;
    try {
      await waitFor(() => /waiting for NATS at .*attempt 2,/.test(output), 'the second "waiting for NATS" line', 60_000);
      late = await startNatsServer({ port });
      await waitFor(() => /^agora-registry: ready$/m.test(output), 'ready', 60_000);
      expect(output).toMatch(/^agora-registry: waiting for NATS at nats:\/\/127\.0\.0\.1:\d+ \(.*\); attempt 1, next in \d+ ms$/m);
      expect(output).toMatch(/NATS at nats:\/\/127\.0\.0\.1:\d+ is reachable/);
      expect(output).not.toMatch(/^\s+at /m);
      child.kill('SIGTERM');
      await exited;
    } finally {
      child.kill('SIGKILL');
      await late?.stop();
    }
  }, 120_000);

  it('NATS reachable but serving no JetStream past AGORA_NATS_WAIT_MS: a line per attempt waiting for the event store, then one line and exit code 2', async () => {
    const plain = await startNatsServer({ jetstream: false });
    try {
      const run = await runToCompletion(REGISTRY, [], { NATS_URL: plain.url, EVENT_STORE: uniqueJetStreamLog('startup', plain.url).eventStore, AGORA_DATA_DIR: await tempDir(), AGORA_NATS_WAIT_MS: '1500' });
      expect(run.code).toBe(2);
      expect(run.stdout).toMatch(/^agora-registry: waiting for the event store \(.*\); attempt 1, next in \d+ ms$/m);
      expectOneLine(run.stderr, /^agora-registry: the event store is unavailable \(.*\); gave up after \d+ s \(AGORA_NATS_WAIT_MS=1500\)$/);
    } finally {
      await plain.stop();
    }
  }, 60_000);

  // As a NATS node started again is reachable before its JetStream has caught up with the cluster.
  it('a process that reaches NATS before JetStream answers waits for the event store and then starts', async () => {
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    let plain: PrivateNatsServer | undefined = await startNatsServer({ port, jetstream: false });
    const env = { NATS_URL: url, EVENT_STORE: uniqueJetStreamLog('startup', url).eventStore, AGORA_DATA_DIR: await tempDir(), AGORA_OPERATOR_PUBLIC_KEY: root.publicKey };
    const child = spawn(process.execPath, sourceArgs(REGISTRY), { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let withJetStream: PrivateNatsServer | undefined;
    try {
      await waitFor(() => /waiting for the event store .*attempt 2,/.test(output), 'the second "waiting for the event store" line', 60_000);
      await plain.stop();
      plain = undefined;
      withJetStream = await startNatsServer({ port });
      await waitFor(() => /^agora-registry: ready$/m.test(output), 'ready', 60_000);
      expect(output).toMatch(/^agora-registry: the event store is available$/m);
      expect(output).not.toMatch(/^\s+at /m);
      child.kill('SIGTERM');
      await exited;
    } finally {
      child.kill('SIGKILL');
      await plain?.stop();
      await withJetStream?.stop();
    }
  }, 120_000);

  it('credentials NATS refuses: one line, exit code 2, the password not printed', async () => {
    const secured = await startNatsServer({ args: ['--user', 'agora', '--pass', 'right-password'] });
    try {
      const url = secured.url.replace('nats://', 'nats://agora:wrong-password@');
      const run = await runToCompletion(REGISTRY, [], { NATS_URL: url, EVENT_STORE: 'jetstream', AGORA_DATA_DIR: await tempDir() });
      expect(run.code).toBe(2);
      expectOneLine(run.stderr, /^agora-registry: NATS at nats:\/\/\*\*\*@127\.0\.0\.1:\d+ refused the credentials/);
      expect(run.stdout + run.stderr).not.toContain('wrong-password');
    } finally {
      await secured.stop();
    }
  }, 60_000);

  it('a data directory held by another process: one line, exit code 2', async () => {
    const dir = await tempDir();
    const env = { NATS_URL: nats.url, EVENT_STORE: `embedded:${join(dir, 'events')}`, AGORA_DATA_DIR: dir, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey };
    const first = await startAgoraProcess(REGISTRY, 'agora-registry', env);
    started.push(first);
    const second = await runToCompletion(REGISTRY, [], env);
    expect(second.code).toBe(2);
    expectOneLine(second.stderr, /^agora-registry: event store directory is in use by process \d+ .*another process holds this data directory/);
    await first.stop();
  }, 90_000);

  (debianUnfixed ? it : it.skip)(`a clustered log on nats-server ${debianVersion ?? '(not installed)'} (before 2.9.21): one line naming the defect and the fix, exit code 2`, async () => {
    const cluster = await startNatsCluster({ bin: DEBIAN_NATS });
    try {
      // The log at 3 replicas, as an operator creates it before starting the services.
      const nc = await connect({ servers: cluster.urls });
      await (await jetstreamManager(nc)).streams.add({ name: 'AGORA_EVENTS', subjects: ['agora.es.>'], num_replicas: 3 });
      await nc.close();
      const run = await runToCompletion(REGISTRY, [], { NATS_URL: cluster.urls[0]!, EVENT_STORE: 'jetstream', AGORA_DATA_DIR: await tempDir(), AGORA_OPERATOR_PUBLIC_KEY: root.publicKey });
      expect(run.code).toBe(2);
      expectOneLine(
        run.stderr,
        new RegExp(`^agora-registry: jetstream: JetStream stream AGORA_EVENTS has 3 replicas, and nats-server ${debianVersion!.replace(/\./g, '\\.')} does not serialize .*nats-io/nats-server#4320.* Run nats-server 2\\.11\\.0 or newer`),
      );
      expect(run.stdout).not.toContain('ready');
    } finally {
      await cluster.stop();
    }
  }, 90_000);

  /** A port some other process holds, for as long as `use` runs. */
  const whileTaken = async (use: (port: number) => Promise<void>) => {
    const blocker: Server = createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)));
    try {
      await use(port);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  };

  it('a port in use: one line naming the port and the setting that moves it (PORT), exit code 2', async () => {
    await whileTaken(async (port) => {
      const dir = await tempDir();
      const run = await runToCompletion(GATEWAY, [], { NATS_URL: nats.url, EVENT_STORE: `embedded:${join(dir, 'events')}`, AGORA_DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' });
      expect(run.code).toBe(2);
      expectOneLine(run.stderr, new RegExp(`^agora-gateway: port ${port} on 127\\.0\\.0\\.1 is already in use \\(another process listens there\\): set PORT to another port \\(0: any free port\\), see --help$`));
    });
  }, 60_000);

  it("npm start's /metrics port in use: the line names METRICS_PORT", async () => {
    await whileTaken(async (port) => {
      const dir = await tempDir();
      const run = await runToCompletion('apps/standalone/src/main.ts', [], { AGORA_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' }, 60_000);
      expect(run.code).toBe(2);
      expectOneLine(run.stderr, new RegExp(`^agora: port ${port} on 127\\.0\\.0\\.1 is already in use \\(another process listens there\\): set METRICS_PORT to another port`));
    });
  }, 90_000);
});
