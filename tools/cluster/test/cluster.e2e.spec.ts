// `npm run cluster` as a newcomer runs it (one replica per service here, to spare the machine):
// three clustered nats-server nodes, the log stream at 3 replicas, every process ready, a command
// through the gateway lands, and SIGINT (Ctrl-C) stops every process it started. Runs the built
// processes (`npm run build` first, as `npm test` does).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSignedCommand, generateKeyPair, parseKeyFile } from '@agora/identity';
import { connect } from '@nats-io/transport-node';
import { freePort, freePortBlock, processEnvironment, REPO_ROOT, waitFor } from '@agora/testing';

describe('npm run cluster (e2e)', () => {
  it('starts a three-node NATS cluster with the log at 3 replicas and every process, serves a command, and stops everything on Ctrl-C', async () => {
    for (const app of ['registry', 'gateway', 'projections', 'cli']) {
      if (!existsSync(join(REPO_ROOT, 'apps', app, 'dist', 'main.js'))) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
    }
    const dir = await mkdtemp(join(tmpdir(), 'agora-cluster-e2e-'));
    // The script takes blocks of ports from one setting each (NATS: client n, route n+2000, monitoring
    // n+4000 for three nodes; metrics: one per process from METRICS_PORT up; the gateway's own).
    // Outgoing connections (the NATS routes' among them) take ephemeral ports, so the blocks are
    // drawn below that range and checked free.
    const base = await freePortBlock([0, 1, 2, 2000, 2001, 2002, 4000, 4001, 4002], { from: 10_000, to: 24_000 });
    const metricsPort = await freePortBlock([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], { from: 26_000, to: 32_000 });
    const gatewayPort = await freePort();
    const env = { AGORA_CLUSTER_DIR: dir, AGORA_CLUSTER_NATS_PORT: String(base), AGORA_CLUSTER_REPLICAS: '1', PORT: String(gatewayPort), METRICS_PORT: String(metricsPort) };
    const child = spawn(process.execPath, ['tools/cluster/cluster.mjs'], { cwd: REPO_ROOT, env: processEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /^cluster: ready$/m.test(output) || child.exitCode !== null, 'cluster: ready', 240_000);
      expect(output).toMatch(/^cluster: ready$/m);
      expect(output).toContain('JetStream stream AGORA_EVENTS, 3 replicas');
      expect(output).toContain(`http://127.0.0.1:${gatewayPort}`);
      expect(output).toContain('created the operator key');
      expect(output).toContain("created the NATS users' passwords");

      // NATS as deploy/nats/auth.conf sets it: no anonymous client; an agent with its password gets in.
      const passwords = JSON.parse(await readFile(join(dir, 'nats-passwords.json'), 'utf8')) as Record<string, string>;
      await expect(connect({ servers: `nats://127.0.0.1:${base}`, reconnect: false })).rejects.toThrow(/authorization|auth/i);
      const agentConnection = await connect({ servers: `nats://127.0.0.1:${base + 1}`, user: 'agent', pass: passwords['agent']!, reconnect: false });
      await agentConnection.close();

      const root = parseKeyFile(await readFile(join(dir, 'operator.key.json'), 'utf8'));
      const alice = generateKeyPair();
      const envelope = createSignedCommand({ type: 'RegisterAgent', actor: 'root', payload: { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'] }, secretKey: root.secretKey });
      const res = await fetch(`http://127.0.0.1:${gatewayPort}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
      expect(await res.json()).toMatchObject({ ok: true, result: { streamId: 'agent-alice', duplicate: false } });

      // The services, as the NATS user service, keep leases in the AGORA_LEASES stream (replicas share their reactors).
      const logs = await readdir(join(dir, 'logs'));
      const registryLog = await readFile(join(dir, 'logs', logs.find((name) => name.startsWith('registry'))!), 'utf8');
      expect(registryLog).toMatch(/lease reactor\.registry-trust: taken by/);
      expect(registryLog).not.toContain('cannot open the lease register');

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(output).toContain('cluster: stopped');
      // Nothing it started is left: the NATS client ports are free again.
      for (const port of [base, base + 1, base + 2, gatewayPort]) {
        const open = await fetch(`http://127.0.0.1:${port}/`).then(
          () => true,
          () => false,
        );
        expect(open).toBe(false);
      }
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
