#!/usr/bin/env node
// `npm run nats-server`: fetches Debian's nats-server package of a suite with apt into the
// repository's cache (.cache/nats-server/<suite>/), extracts the binary, checks that it runs and
// prints its path. The tests, the benchmarks and `npm run cluster` take their nats-server from here
// (libs/testing's natsServerBin(): NATS_SERVER_BIN first, then this cache, then PATH).
//
// Nothing is installed system-wide: apt runs with a sources list, package lists and a package cache
// of its own under the cache folder, naming the Debian mirror the machine's own apt configuration
// names (no host is written here). Plain Node, no dependencies: it runs before `npm ci` too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The suites Agora knows, by the name of their cache folder: Debian's codename and what it ships. */
export const SUITES = {
  unstable: { codename: 'sid', what: 'Debian unstable' },
  trixie: { codename: 'trixie', what: 'Debian 13' },
  bookworm: { codename: 'bookworm', what: 'Debian 12' },
};
const ALIASES = { sid: 'unstable', newest: 'unstable', 13: 'trixie', 12: 'bookworm' };

const HELP = `Usage: npm run nats-server -- [SUITE ...] [--refresh] [--quiet]

Fetches Debian's nats-server package of each SUITE with apt into .cache/nats-server/<suite>/ (a
private sources list, package lists and package cache: nothing is installed system-wide), extracts
the binary, checks that it runs, and prints its path (one line per suite) on stdout.

Suites:
  unstable   Debian unstable, the newest nats-server (default; also: sid, newest)
  trixie     Debian 13 (also: 13)
  bookworm   Debian 12 (also: 12)

The Debian mirror is the one the machine's apt configuration names for Debian's main archive
(/etc/apt/sources.list, /etc/apt/sources.list.d/). A binary already in the cache that runs is kept
unless --refresh is given.

Options:
  --refresh   fetch the package lists and the package again
  --quiet     say nothing on stderr unless it fails
  --help      this text

Environment:
  AGORA_NATS_CACHE   the cache folder (default: .cache/nats-server in the repository)

Which nats-server Agora runs: NATS_SERVER_BIN when set, else the cached unstable one, else
nats-server on the PATH (libs/testing/src/nats-server.ts). A clustered log needs nats-server 2.11 or
newer; a single node runs on 2.9.10 or newer (docs/cluster.md).

Where apt or Debian's packages cannot be reached: install nats-server 2.11 or newer by hand and set
NATS_SERVER_BIN to the binary.`;

class InstallError extends Error {}
class UsageError extends InstallError {}

export function cacheRoot(env = process.env) {
  return resolve(env.AGORA_NATS_CACHE?.trim() || join(ROOT, '.cache', 'nats-server'));
}

/** The cached binary of a suite (it may not exist yet). */
export function cachedBinary(suite, env = process.env) {
  return join(cacheRoot(env), suite, 'nats-server');
}

function suiteName(arg) {
  const name = ALIASES[arg] ?? arg;
  if (!(name in SUITES)) throw new UsageError(`unknown suite ${JSON.stringify(arg)}: one of ${Object.keys(SUITES).join(', ')} (see --help)`);
  return name;
}

/** The version `bin --version` reports, or undefined when it does not run. */
function versionOf(bin) {
  const run = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? /v?(\d+\.\d+\.\d+\S*)/.exec(run.stdout)?.[1] : undefined;
}

/**
 * The sources of the machine's apt configuration, one-line (`deb [opts] URI suite comp...`) and
 * deb822 (`Types: deb`, `URIs:`, `Suites:`, `Components:`, `Signed-By:`), as {uris, suites, components, signedBy}.
 */
export function aptSources(etc = '/etc/apt') {
  const files = [join(etc, 'sources.list')];
  const parts = join(etc, 'sources.list.d');
  if (existsSync(parts)) for (const f of readdirSync(parts).sort()) if (f.endsWith('.list') || f.endsWith('.sources')) files.push(join(parts, f));
  const sources = [];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const fields = {};
        for (const line of stanza.split('\n')) {
          if (line.startsWith('#')) continue;
          const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
          if (m) fields[m[1].toLowerCase()] = m[2].trim();
        }
        if (!fields.types?.split(/\s+/).includes('deb') || /^no$/i.test(fields.enabled ?? '')) continue;
        sources.push({ uris: fields.uris?.split(/\s+/) ?? [], suites: fields.suites?.split(/\s+/) ?? [], components: fields.components?.split(/\s+/) ?? [], signedBy: fields['signed-by'] });
      }
    } else {
      for (const raw of text.split('\n')) {
        const line = raw.replace(/#.*/, '').trim();
        const m = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s+(.*)$/.exec(line);
        if (!m) continue;
        const signedBy = /signed-by=(\S+)/.exec(m[1] ?? '')?.[1];
        sources.push({ uris: [m[2]], suites: [m[3]], components: m[4].split(/\s+/), signedBy });
      }
    }
  }
  return sources;
}

const DEBIAN_SUITE = /^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldstable|stable|testing|unstable)(-updates|-backports)?$/;
const DEBIAN_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

/** The mirror of Debian's main archive that the machine's apt uses, and the keyring that signs it. */
export function debianMirror(etc = '/etc/apt') {
  for (const source of aptSources(etc)) {
    if (!source.suites.some((s) => DEBIAN_SUITE.test(s)) || !source.components.includes('main')) continue;
    const uri = source.uris.find((u) => /^(https?|file):/.test(u));
    if (!uri) continue;
    const keyring = source.signedBy && !source.signedBy.includes('\n') && existsSync(source.signedBy) ? source.signedBy : DEBIAN_KEYRING;
    return { uri: uri.replace(/\/+$/, ''), keyring };
  }
  throw new InstallError("the machine's apt configuration names no Debian archive with a main component (/etc/apt/sources.list, /etc/apt/sources.list.d/)");
}

function run(command, args, what) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' } });
  if (result.error) throw new InstallError(`${what}: cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0) throw new InstallError(`${what}: ${command} exited with ${result.status}:\n${(result.stderr || result.stdout).trim().split('\n').slice(-8).join('\n')}`);
  return result.stdout;
}

/** Fetches the package of `suite` into its cache folder and extracts the binary; returns {bin, version, pkgVersion}. */
function fetchSuite(suite, { refresh, say }) {
  const { codename, what } = SUITES[suite];
  const dir = join(cacheRoot(), suite);
  const bin = join(dir, 'nats-server');
  if (!refresh && existsSync(bin)) {
    const version = versionOf(bin);
    if (version) return { bin, version, cached: true };
    say(`${bin} does not run: fetching it again`);
  }
  const { uri, keyring } = debianMirror();
  if (!existsSync(keyring)) throw new InstallError(`Debian's archive keyring ${keyring} is missing (apt-get install debian-archive-keyring)`);
  const apt = join(dir, 'apt');
  for (const sub of ['lists/partial', 'cache/archives/partial', 'download']) mkdirSync(join(apt, sub), { recursive: true });
  const sourcesList = join(apt, 'sources.list');
  writeFileSync(sourcesList, `deb [signed-by=${keyring}] ${uri} ${codename} main\n`);
  const options = [
    ['Dir::Etc::SourceList', sourcesList],
    ['Dir::Etc::SourceParts', '/dev/null'],
    ['Dir::Etc::Preferences', '/dev/null'],
    ['Dir::Etc::PreferencesParts', '/dev/null'],
    ['Dir::State::Lists', join(apt, 'lists')],
    ['Dir::State::status', '/dev/null'],
    ['Dir::Cache', join(apt, 'cache')],
    ['Debug::NoLocking', '1'],
    // apt's download sandbox user cannot write into a folder of ours: download as who runs this.
    ['APT::Sandbox::User', userInfo().username],
  ].flatMap(([k, v]) => ['-o', `${k}=${v}`]);
  say(`fetching the package lists of ${what} (${codename}) from the mirror apt is configured with`);
  run('apt-get', [...options, '-qq', 'update'], `apt-get update for ${codename}`);
  const policy = run('apt-cache', [...options, 'policy', 'nats-server'], `apt-cache policy nats-server (${codename})`);
  const pkgVersion = /Candidate:\s*(\S+)/.exec(policy)?.[1];
  if (!pkgVersion || pkgVersion === '(none)') throw new InstallError(`${what} (${codename}) has no nats-server package`);
  say(`downloading nats-server ${pkgVersion}`);
  const download = join(apt, 'download');
  for (const f of readdirSync(download)) rmSync(join(download, f), { recursive: true, force: true });
  const fetched = spawnSync('apt-get', [...options, '-qq', 'download', `nats-server=${pkgVersion}`], { cwd: download, encoding: 'utf8' });
  if (fetched.status !== 0) throw new InstallError(`apt-get download nats-server=${pkgVersion}: ${(fetched.stderr || fetched.error?.message || '').trim()}`);
  const deb = readdirSync(download).find((f) => f.endsWith('.deb'));
  if (!deb) throw new InstallError(`apt-get download nats-server=${pkgVersion} left no .deb`);
  const extracted = join(download, 'x');
  run('dpkg-deb', ['-x', join(download, deb), extracted], `dpkg-deb -x ${deb}`);
  const inside = join(extracted, 'usr', 'sbin', 'nats-server');
  if (!existsSync(inside)) throw new InstallError(`${deb} holds no usr/sbin/nats-server`);
  const version = versionOf(inside);
  if (!version) throw new InstallError(`the nats-server of ${deb} does not run on this machine`);
  renameSync(inside, bin);
  const copyright = join(extracted, 'usr', 'share', 'doc', 'nats-server', 'copyright');
  if (existsSync(copyright)) renameSync(copyright, join(dir, 'copyright'));
  writeFileSync(join(dir, 'package'), `nats-server ${pkgVersion} from ${what} (${codename})\n`);
  // The package lists and the package are not needed once the binary is out (about 10 MB a suite).
  rmSync(apt, { recursive: true, force: true });
  return { bin, version, pkgVersion, cached: false };
}

/** Fetches (or finds in the cache) each suite's nats-server; returns their binaries. Throws InstallError with what to do by hand. */
export function installNatsServers(suites, { refresh = false, say = () => {} } = {}) {
  return suites.map(suiteName).map((suite) => {
    try {
      return { suite, ...fetchSuite(suite, { refresh, say }) };
    } catch (error) {
      if (!(error instanceof InstallError)) throw error;
      throw new InstallError(
        `cannot fetch Debian's nats-server package of ${SUITES[suite].what}: ${error.message}\n` +
          `Install nats-server by hand (2.11 or newer for a clustered log; your distribution's package or the NATS project's release) and set NATS_SERVER_BIN to the binary.`,
      );
    }
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { refresh: { type: 'boolean', default: false }, quiet: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } } });
  } catch (error) {
    console.error(`nats-server: ${error.message} (see --help)`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const say = parsed.values.quiet ? () => {} : (line) => console.error(`nats-server: ${line}`);
  try {
    for (const server of installNatsServers(parsed.positionals.length > 0 ? parsed.positionals : ['unstable'], { refresh: parsed.values.refresh, say })) {
      say(`${server.cached ? 'cached' : 'installed'}: nats-server ${server.version} (${SUITES[server.suite].what}) at ${server.bin}`);
      console.log(server.bin);
    }
  } catch (error) {
    console.error(`nats-server: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof UsageError ? 2 : error instanceof InstallError ? 1 : 3);
  }
}
