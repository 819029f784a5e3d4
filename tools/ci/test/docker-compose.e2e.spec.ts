/**
 * docker-compose.yml and deploy/ checked without Docker (no daemon runs here; no container is ever
 * started): Debian's docker-compose (1.29, `apt-get install docker-compose`; .ci/run installs it)
 * validates the file against the Compose schema and resolves it (`docker-compose config`), offline.
 * The resolved file, parsed with the YAML library docker-compose itself runs on, must then say what
 * a distributed Agora needs: every Agora process health-checked on its /health, restarted, started
 * only once NATS and the store are healthy, scraped by Prometheus; no monitoring port on the host;
 * NATS with its users. Skipped, and saying so, when docker-compose is not installed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { DEFAULT_METRICS_PORTS } from '@agora/runtime';
import { freePort, NATS_SERVER_BIN, REPO_ROOT, resolveNatsServer, waitFor } from '@agora/testing';

const COMPOSE = process.env['DOCKER_COMPOSE_BIN'] ?? '/usr/bin/docker-compose';
/** Debian's docker-compose runs on the system python3, whose PyYAML (python3-yaml) it depends on. */
const PYTHON = '/usr/bin/python3';
const hasCompose = existsSync(COMPOSE) && existsSync(PYTHON);
if (!hasCompose) console.warn(`SKIPPED the docker-compose.yml checks: ${COMPOSE} not found; install it with \`apt-get install docker-compose\` or set DOCKER_COMPOSE_BIN`);

/** The Agora processes docker-compose.yml runs, each on its default METRICS_PORT. */
/** The Agora processes docker-compose.yml runs: every service (not the one-process mode, nor `agora audit --follow`, which an auditor runs beside it as the auditor user). */
const AGORA_SERVICES = Object.entries(DEFAULT_METRICS_PORTS).filter(([name]) => name !== 'standalone' && name !== 'audit');
/** The users of deploy/nats/auth.conf (roles.conf: one per role). */
const NATS_ROLES = ['SERVICE', 'GATEWAY', 'AGENT', 'OBSERVER', 'AUDITOR'] as const;
/** The users of deploy/nats/auth-services.conf (services.conf), which docker-compose.yml runs: one per Agora process, the observer and the auditor. */
const NATS_SERVICE_USERS = [...AGORA_SERVICES.map(([name]) => name.toUpperCase()), 'OBSERVER', 'AUDITOR'];
/** The walkthrough's .env: every NATS password (of both users files) and the operator's public key. */
const WALKTHROUGH_ENV: Record<string, string> = {
  ...Object.fromEntries([...NATS_ROLES, ...NATS_SERVICE_USERS].map((role) => [`AGORA_NATS_${role}_PASSWORD`, `pw${role.toLowerCase()}0123456789`])),
  AGORA_OPERATOR_PUBLIC_KEY: 'ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a tool to completion in the repository root with only `env` (and PATH, HOME) set, `input` on its stdin. */
function run(command: string, args: readonly string[], env: Record<string, string>, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** YAML text as a value, through PyYAML (safe_load). */
async function parseYaml(text: string): Promise<unknown> {
  const parsed = await run(PYTHON, ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'], {}, text);
  if (parsed.code !== 0) throw new Error(`cannot parse YAML: ${parsed.stderr}`);
  return JSON.parse(parsed.stdout);
}

interface ComposeService {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | null>;
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
  ports?: { published: number; target: number }[];
  volumes?: string[];
}

describe('docker-compose.yml (checked by docker-compose config, never run)', () => {
  let dir: string;
  let envFile: string;
  /** `docker-compose config` with `env` as the only variables (no .env of the working tree). */
  const config = (env: Record<string, string>, ...args: string[]) => run(COMPOSE, ['--env-file', envFile, '-f', 'docker-compose.yml', 'config', ...args], env);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-compose-'));
    envFile = join(dir, 'empty.env');
    await writeFile(envFile, '');
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  (hasCompose ? it : it.skip)('is valid and asks for no variable, so `docker compose up kurrentdb` needs nothing set', async () => {
    const result = await config({}, '-q');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  describe('resolved with the walkthrough environment', () => {
    let services: Record<string, ComposeService>;
    beforeAll(async () => {
      if (!hasCompose) return;
      const result = await config(WALKTHROUGH_ENV);
      if (result.code !== 0 || result.stderr !== '') throw new Error(`docker-compose config failed (${result.code}):\n${result.stderr}`);
      services = ((await parseYaml(result.stdout)) as { services: Record<string, ComposeService> }).services;
    }, 60_000);

    (hasCompose ? it : it.skip)('runs every Agora process, each health-checked on /health at its metrics port, restarted, after NATS and the store are healthy', () => {
      const agora = Object.entries(services).filter(([, service]) => service.command?.[0] === 'node');
      expect(agora.map(([name]) => name).sort()).toEqual(AGORA_SERVICES.map(([name]) => name).sort());
      for (const [name, port] of AGORA_SERVICES) {
        const service = services[name]!;
        expect({ name, command: service.command }).toEqual({ name, command: ['node', `apps/${name}/dist/main.js`] });
        expect({ name, METRICS_PORT: service.environment?.['METRICS_PORT'] ?? String(port) }).toEqual({ name, METRICS_PORT: String(port) });
        expect({ name, health: service.healthcheck?.test?.join(' ') }).toEqual({ name, health: expect.stringContaining(`http://127.0.0.1:${port}/health`) });
        expect({ name, restart: service.restart }).toEqual({ name, restart: 'unless-stopped' });
        expect({ name, depends: service.depends_on }).toEqual({ name, depends: { nats: { condition: 'service_healthy' }, kurrentdb: { condition: 'service_healthy' }, postgres: { condition: 'service_healthy' } } });
        // Its own NATS user (named after it: deploy/nats/services.conf) and password, never the anonymous access NATS refuses.
        expect({ name, user: service.environment?.['NATS_USER'], password: service.environment?.['NATS_PASSWORD'] }).toEqual({ name, user: name, password: WALKTHROUGH_ENV[`AGORA_NATS_${name.toUpperCase()}_PASSWORD`] });
        // The shared log, named (a process on NATS refuses to start without an explicit EVENT_STORE).
        expect({ name, store: service.environment?.['EVENT_STORE'] }).toEqual({ name, store: 'kurrentdb://kurrentdb:2113?tls=false' });
        // The read models of every replica in one PostgreSQL (the compose file's own).
        expect({ name, readDb: service.environment?.['AGORA_READ_DB'] }).toEqual({ name, readDb: 'postgres://agora:agora@postgres:5432/agora' });
        expect({ name, operator: service.environment?.['AGORA_OPERATOR_PUBLIC_KEY'] }).toEqual({ name, operator: WALKTHROUGH_ENV['AGORA_OPERATOR_PUBLIC_KEY'] });
        // Its own key file only.
        const keyFiles = (service.volumes ?? []).map((volume) => /service-keys\/([a-z]+)\.key\.json:/.exec(volume)?.[1]).filter((key) => key !== undefined);
        expect({ name, keyFiles }).toEqual({ name, keyFiles: name === 'gateway' ? [] : [name] });
      }
    });

    (hasCompose ? it : it.skip)('health-checks and restarts every other service, and waits only on health-checked ones', () => {
      for (const [name, service] of Object.entries(services)) {
        expect({ name, restart: service.restart }).toEqual({ name, restart: 'unless-stopped' });
        // The exporter's image has nothing but the exporter to run a check with; Prometheus' up{job="nats"} watches it.
        const checked = (service.healthcheck?.test?.length ?? 0) > 1 && service.healthcheck?.disable !== true;
        expect({ name, checked }).toEqual({ name, checked: name !== 'nats-exporter' });
        for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
          expect({ name, dependency, condition }).toEqual({ name, dependency, condition: 'service_healthy' });
          expect({ dependency, health: services[dependency]?.healthcheck?.test !== undefined }).toEqual({ dependency, health: true });
        }
      }
    });

    (hasCompose ? it : it.skip)('publishes no monitoring port: only NATS clients, KurrentDB, the gateway, Prometheus and Grafana', () => {
      const published = Object.entries(services).flatMap(([name, service]) => (service.ports ?? []).map((port) => `${name}:${port.published}->${port.target}`));
      expect(published.sort()).toEqual(['gateway:8080->8080', 'grafana:3000->3000', 'kurrentdb:2113->2113', 'nats:4222->4222', 'prometheus:9090->9090']);
    });

    (hasCompose ? it : it.skip)('starts NATS on deploy/nats/single-services.conf (one user per service) through start.sh, with every user password from the environment', () => {
      const nats = services['nats']!;
      expect(nats.entrypoint).toEqual(['/bin/sh', '/etc/nats/start.sh']);
      expect(nats.command).toEqual(['/etc/nats/single-services.conf']);
      for (const role of NATS_SERVICE_USERS) expect(nats.environment?.[`AGORA_NATS_${role}_PASSWORD`]).toBe(WALKTHROUGH_ENV[`AGORA_NATS_${role}_PASSWORD`]);
      expect(nats.healthcheck?.test?.join(' ')).toContain('http://127.0.0.1:8222/healthz');
      // A server that knows `sync_interval: always`, which single-services.conf sets (checked on a real server below).
      const [major, minor] = (/^nats:(\d+)\.(\d+)/.exec(nats.image ?? '') ?? []).slice(1).map(Number);
      expect({ image: nats.image, knowsSyncInterval: major! > 2 || (major === 2 && minor! >= 10) }).toEqual({ image: nats.image, knowsSyncInterval: true });
    });

    (hasCompose ? it : it.skip)('has Prometheus scrape every Agora process on its metrics port, and NATS through the exporter', async () => {
      const prometheus = (await parseYaml(await readFile(join(REPO_ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8'))) as {
        scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      };
      const targets = (job: string) => prometheus.scrape_configs.filter((c) => c.job_name === job).flatMap((c) => c.static_configs.flatMap((s) => s.targets));
      expect(targets('agora').sort()).toEqual(AGORA_SERVICES.map(([name, port]) => `${name}:${port}`).sort());
      expect(targets('nats')).toEqual(['nats-exporter:7777']);
      expect(services['nats-exporter']?.command?.at(-1)).toBe('http://nats:8222');
      expect(services['prometheus']?.volumes).toContainEqual(expect.stringMatching(/\/deploy\/prometheus:\/etc\/prometheus:ro$/));
    }, 60_000);
  });
});

describe('deploy/nats/start.sh', () => {
  const START = 'deploy/nats/start.sh';
  const passwords = WALKTHROUGH_ENV;

  it('refuses to start NATS with a password unset, empty or unreadable, naming each (exit code 2)', async () => {
    const none = await run('/bin/sh', [START, 'deploy/nats/single.conf'], { NATS_SERVER_BIN: '/bin/echo' });
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    for (const role of NATS_ROLES) expect(none.stderr).toContain(`nats: AGORA_NATS_${role}_PASSWORD is not set`);
    // The passwords are those of the users the configuration includes: one per service with services.conf.
    const perService = await run('/bin/sh', [START, 'deploy/nats/single-services.conf'], { NATS_SERVER_BIN: '/bin/echo' });
    expect(perService.code).toBe(2);
    const missing = perService.stderr.trim().split('\n').map((line) => /AGORA_NATS_([A-Z]+)_PASSWORD/.exec(line)?.[1]);
    expect(missing.sort()).toEqual([...NATS_SERVICE_USERS].sort());

    const bad = await run('/bin/sh', [START, 'deploy/nats/single.conf'], { ...passwords, AGORA_NATS_AGENT_PASSWORD: '', AGORA_NATS_AUDITOR_PASSWORD: '9lives', NATS_SERVER_BIN: '/bin/echo' });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toEqual([
      'nats: AGORA_NATS_AGENT_PASSWORD is not set (an empty password would let anyone in; see deploy/nats/auth.conf)',
      'nats: AGORA_NATS_AUDITOR_PASSWORD must start with a letter and hold only letters, digits, - and _',
    ]);
  });

  it('with every password, runs nats-server on the configuration: no anonymous access, each user with its password', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agora-nats-start-'));
    const port = await freePort();
    // single.conf as it is, moved to private ports and store by a wrapper that includes it.
    const wrapper = join(dir, 'server.conf');
    await writeFile(wrapper, `include "${relative(dir, join(REPO_ROOT, 'deploy/nats/single.conf'))}"\nlisten: "127.0.0.1:${port}"\nhttp: "127.0.0.1:${await freePort()}"\njetstream { store_dir: "${join(dir, 'store')}" }\n`);
    const child = spawn('/bin/sh', [START, wrapper], { cwd: REPO_ROOT, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NATS_SERVER_BIN, ...passwords }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    try {
      await waitFor(() => log.includes('Server is ready') || child.exitCode !== null, 'nats-server ready', 15_000);
      expect(log).toContain('Server is ready');
      await expect(connect({ servers: `127.0.0.1:${port}`, reconnect: false })).rejects.toThrow(/authorization/i);
      await expect(connect({ servers: `127.0.0.1:${port}`, user: 'service', reconnect: false })).rejects.toThrow(/authorization/i);
      const nc = await connect({ servers: `127.0.0.1:${port}`, user: 'service', pass: passwords['AGORA_NATS_SERVICE_PASSWORD']!, reconnect: false });
      await nc.close();
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

/**
 * The shipped configurations that hold a log someone keeps flush every write before acknowledging it
 * (`sync_interval: always`, docs/deployment.md "Durability"): each is run by the real nats-server, moved to
 * private ports and store (without its users, and with a route to itself in place of its peers),
 * and the server's own monitoring endpoint must say `sync_always`. Needs nats-server 2.10 or newer
 * (2.9 refuses the field): skipped, saying so, on an older one.
 */
describe('the NATS configurations docker-compose.yml and a production cluster run', () => {
  const server = resolveNatsServer();
  const [major, minor] = (server.version ?? '0.0').split('.').map(Number);
  const knows = major! > 2 || (major === 2 && minor! >= 10);
  if (!knows) console.warn(`SKIPPED the sync_interval checks of deploy/nats: nats-server ${server.version ?? '(does not run)'} (${server.bin}) is older than 2.10; set NATS_SERVER_BIN to a newer one`);

  it.each(['deploy/nats/single-services.conf', 'deploy/nats/cluster-node.conf'])('%s: the server flushes every write before acknowledging it (sync_always in /varz)', async (file) => {
    const text = await readFile(join(REPO_ROOT, file), 'utf8');
    expect(text).toMatch(/^\s*sync_interval:\s*always\s*$/m);
    if (!knows) return;
    const dir = await mkdtemp(join(tmpdir(), 'agora-nats-sync-'));
    const [client, http, route] = [await freePort(), await freePort(), await freePort()];
    const moved = text
      .replace(/^\s*include .*$/gm, '')
      .replace(/^(\s*)store_dir: .*$/m, `$1store_dir: ${JSON.stringify(join(dir, 'store'))}`)
      .replace(/^listen: .*$/m, `listen: 127.0.0.1:${client}`)
      .replace(/^http: .*$/m, `http: 127.0.0.1:${http}`)
      .replace(/^(\s+)listen: 0\.0\.0\.0:6222$/m, `$1listen: 127.0.0.1:${route}`)
      .replace(/routes: \[[^\]]*\]/, `routes: [nats-route://127.0.0.1:${route}]`);
    await writeFile(join(dir, 'server.conf'), moved);
    const child = spawn(server.bin, ['-c', join(dir, 'server.conf')], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE_NAME: 'n1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    try {
      await waitFor(() => log.includes('Server is ready') || child.exitCode !== null, `nats-server ready on ${file}`, 15_000);
      expect(log).toContain('Server is ready');
      const varz = (await (await fetch(`http://127.0.0.1:${http}/varz`)).json()) as { jetstream?: { config?: { sync_always?: boolean } } };
      expect({ file, syncAlways: varz.jetstream?.config?.sync_always }).toEqual({ file, syncAlways: true });
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('key files', () => {
  it('are ignored by git wherever the README and deploy/ put them', async () => {
    const paths = ['alice.key.json', 'data/alice.key.json', 'clients/alice.key.json', 'deploy/service-keys/registry.key.json', 'deploy/service-keys/public-keys.json'];
    const ignored = await run('git', ['check-ignore', '--no-index', ...paths], {});
    expect(ignored.stdout.trim().split('\n').sort()).toEqual([...paths].sort());
  });
});
