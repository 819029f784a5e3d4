// What the tests need on the machine, made ready before they run (idempotent: what is there is kept):
// the nats-servers (the newest for the tests' private servers and clusters; a shared one with JetStream
// on 127.0.0.1:4222) and the Debian packages some suites drive (prometheus, docker-compose, Python's
// cryptography, Go with the NATS Go client, chromium). Installing a package needs root (apt-get); without
// it, the set-up names what to install by hand and stops.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Debian's nats-server of the system package (2.9.10 on Debian 12): the shared server's, as before. */
export const SYSTEM_NATS_SERVER = '/usr/sbin/nats-server';

/**
 * What the suites need from Debian, each with how to tell it is there: prometheus and promtool (the
 * metrics and alert rules, a real scrape), docker-compose (`docker-compose config` checks the compose
 * file; no daemon), Python 3 with cryptography and Go with the NATS Go client (the reference clients),
 * chromium (the web console's tests, through playwright-core).
 */
export const DEBIAN_PACKAGES = [
  { packages: ['prometheus'], what: 'prometheus and promtool', present: () => onPath('prometheus') && onPath('promtool') },
  { packages: ['docker-compose'], what: 'docker-compose', present: () => onPath('docker-compose') || existsSync('/usr/bin/docker-compose') },
  { packages: ['python3', 'python3-cryptography'], what: "Python 3's cryptography", present: () => runs('python3', ['-c', 'import cryptography']) || runs('/usr/bin/python3', ['-c', 'import cryptography']) },
  { packages: ['golang-go'], what: 'Go', present: () => onPath('go') },
  { packages: ['golang-github-nats-io-go-nats-dev'], what: 'the NATS Go client', present: () => existsSync('/usr/share/gocode/src/github.com/nats-io/nats.go') },
  { packages: ['chromium'], what: 'chromium', present: () => onPath('chromium') || existsSync('/usr/bin/chromium') },
];

function runs(command, args) {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

function onPath(command) {
  return runs('sh', ['-c', `command -v ${command}`]);
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Installs Debian packages with apt-get (root only); throws a message naming them otherwise. */
export function aptInstall(packages, log) {
  if (packages.length === 0) return;
  if (!isRoot()) {
    throw new Error(`the tests need Debian's ${packages.join(', ')}; installing them takes root (apt-get). Install them by hand, then run the tests again:\n  sudo apt-get install --no-install-recommends ${packages.join(' ')}`);
  }
  log(`installing Debian's ${packages.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...packages]]) {
    const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${run.status ?? run.signal}); install ${packages.join(' ')} by hand`);
  }
  // The prometheus package starts its own service; the tests start their own Prometheus on free ports.
  if (packages.includes('prometheus')) spawnSync('sh', ['-c', 'command -v service >/dev/null && service prometheus stop'], { stdio: 'ignore' });
}

/** The Debian packages that are missing, installed (or named, without root). */
export function ensureDebianPackages(log) {
  const missing = DEBIAN_PACKAGES.filter((p) => !p.present());
  for (const p of DEBIAN_PACKAGES) if (!missing.includes(p)) log(`${p.what}: present`);
  aptInstall([...new Set(missing.flatMap((p) => p.packages))], log);
  const still = missing.filter((p) => !p.present());
  if (still.length > 0) throw new Error(`still missing after apt-get: ${still.map((p) => p.what).join(', ')}`);
}

/**
 * The nats-server the tests' private servers and clusters run (NATS_SERVER_BIN for every test
 * process): the one NATS_SERVER_BIN names, else Debian unstable's, the newest, which `npm run
 * nats-server` fetches into .cache/nats-server/ (once; Debian 13's too, which a test of the store's
 * refusal of a clustered log on 2.10 runs), by the rule of libs/testing (natsServerBin).
 */
export function privateNatsServer(root, log) {
  if (process.env.NATS_SERVER_BIN) {
    log(`NATS_SERVER_BIN=${process.env.NATS_SERVER_BIN} (as set)`);
    return process.env.NATS_SERVER_BIN;
  }
  const fetched = spawnSync(process.execPath, [join(root, 'tools', 'nats-server', 'install.mjs'), 'unstable', 'trixie', '--quiet'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (fetched.status !== 0) throw new Error('npm run nats-server could not fetch the nats-servers (see above); or set NATS_SERVER_BIN to a nats-server 2.11 or newer');
  const rule = spawnSync(process.execPath, ['--conditions=agora-source', '--import', './tools/ts-run/register.mjs', 'tools/ci/nats-server-bin.mjs'], { cwd: root, encoding: 'utf8' });
  const bin = rule.stdout?.trim();
  if (rule.status !== 0 || !bin) throw new Error(`no nats-server for the tests: ${rule.stderr.trim()}; set NATS_SERVER_BIN to one`);
  log(`private servers and clusters: ${rule.stderr.trim()}`);
  return bin;
}

function portAnswers(host, port) {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function jetStreamReady(root, url) {
  return spawnSync(process.execPath, [join(root, 'tools', 'ci', 'nats-ready.mjs'), url], { cwd: root, encoding: 'utf8' });
}

/**
 * A NATS server with JetStream on `url` (127.0.0.1:4222 unless NATS_URL says otherwise): kept when one
 * answers; else Debian's system nats-server (installed when missing) is started for this run with a
 * store of its own, and `stop()` ends it and removes the store.
 */
export async function sharedNatsServer(root, url, log) {
  const ready = jetStreamReady(root, url);
  if (ready.status === 0) {
    log(ready.stdout.trim());
    return { stop: async () => undefined };
  }
  const { hostname: host, port } = new URL(url.replace(/^nats:/, 'http:'));
  if (await portAnswers(host, Number(port))) {
    throw new Error(`something answers on ${host}:${port} but JetStream does not (${ready.stderr.trim()}): start it with -js, or stop it`);
  }
  if (!existsSync(SYSTEM_NATS_SERVER)) aptInstall(['nats-server'], log);
  const dir = mkdtempSync(join(tmpdir(), 'agora-test-shared-nats-'));
  const logFile = join(dir, 'server.log');
  const child = spawn(SYSTEM_NATS_SERVER, ['-a', host, '-p', String(port), '-js', '-sd', join(dir, 'store')], { stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')], detached: false });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 50; i++) {
    if (jetStreamReady(root, url).status === 0) {
      log(`started ${SYSTEM_NATS_SERVER} -js on ${host}:${port} for this run (pid ${child.pid}; stopped at the end)`);
      return { stop };
    }
    await sleep(200);
  }
  await stop();
  throw new Error(`${SYSTEM_NATS_SERVER} did not come up on ${host}:${port}`);
}

/** PostgreSQL's server programs of the newest version installed (Debian's `postgresql` package), or undefined. */
function postgresBin() {
  const found = spawnSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1'], { encoding: 'utf8' }).stdout.trim();
  return found && existsSync(join(found, 'initdb')) ? found : undefined;
}

async function postgresAnswers(root, url) {
  const { default: pg } = await import(join(root, 'node_modules', 'pg', 'lib', 'index.js'));
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query('SHOW server_version');
    return { ok: true, version: rows[0].server_version };
  } catch (error) {
    return { ok: false, error: error.message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A PostgreSQL for the read-model suites on `url` (TEST_POSTGRES_URL, default the machine's on
 * 127.0.0.1:5432 as user postgres): kept when it answers; else Debian's `postgresql` (installed when
 * missing) runs a cluster of this run's own on that port (trust authentication, in a temporary
 * directory), and `stop()` ends it and removes it.
 */
export async function sharedPostgres(root, url, log) {
  const answer = await postgresAnswers(root, url);
  if (answer.ok) {
    log(`PostgreSQL ${answer.version} at ${url.replace(/:[^:@/]*@/, ':***@')}`);
    return { stop: async () => undefined };
  }
  const { hostname: host, port } = new URL(url);
  if (await portAnswers(host, Number(port || 5432))) {
    throw new Error(`something answers on ${host}:${port || 5432} but PostgreSQL does not let the tests in (${answer.error}): set TEST_POSTGRES_URL to a database the tests may create databases on`);
  }
  if (!postgresBin()) aptInstall(['postgresql'], log);
  const bin = postgresBin();
  if (!bin) throw new Error("Debian's postgresql did not install its server programs (/usr/lib/postgresql/<version>/bin)");
  // PostgreSQL refuses to run as root: the cluster belongs to the postgres user the package creates.
  const asPostgres = (command, args) => (isRoot() ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { encoding: 'utf8' }) : spawnSync(join(bin, command), args, { encoding: 'utf8' }));
  const dir = mkdtempSync(join(tmpdir(), 'agora-test-postgres-'));
  if (isRoot()) spawnSync('chown', ['-R', 'postgres', dir]);
  const data = join(dir, 'data');
  const init = asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const start = asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port || 5432} -k ${dir} -c listen_addresses=${host} -c fsync=off`, 'start']);
  if (start.status !== 0) throw new Error(`PostgreSQL did not start: ${start.stderr || start.stdout}`);
  const stop = async () => {
    asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    rmSync(dir, { recursive: true, force: true });
  };
  const started = await postgresAnswers(root, url);
  if (!started.ok) {
    await stop();
    throw new Error(`PostgreSQL started but does not answer at ${url}: ${started.error}`);
  }
  log(`started PostgreSQL ${started.version} on ${host}:${port || 5432} for this run (a cluster of its own; stopped at the end)`);
  return { stop };
}
