// `npm run nats-server`: the Debian mirror comes from the machine's apt configuration (both of apt's
// source formats), a suite's binary is fetched once and then taken from the cache, and bad input is
// refused with the usage exit code. The fetch itself runs in CI's set-up (.ci/run), which this test
// follows: it finds the cached binary there and checks that it runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedNatsServerBin, natsServerVersion, REPO_ROOT } from '@agora/testing';

const SCRIPT = join(REPO_ROOT, 'tools', 'nats-server', 'install.mjs');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const load = async (): Promise<any> => import(SCRIPT);

describe('npm run nats-server (e2e)', () => {
  let etc: string;
  beforeEach(() => {
    etc = mkdtempSync(join(tmpdir(), 'agora-apt-etc-'));
    mkdirSync(join(etc, 'sources.list.d'));
  });
  afterEach(() => rmSync(etc, { recursive: true, force: true }));

  it("takes the mirror of Debian's main archive from deb822 sources, past security and disabled entries", async () => {
    writeFileSync(
      join(etc, 'sources.list.d', 'debian.sources'),
      [
        'Types: deb\nURIs: http://mirror.invalid/security\nSuites: bookworm-security\nComponents: main\n',
        'Types: deb\nURIs: http://disabled.invalid/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n',
        'Types: deb deb-src\n# a comment\nURIs: http://mirror.invalid/debian/\nSuites: bookworm bookworm-updates\nComponents: main contrib\nSigned-By: /nonexistent.gpg\n',
      ].join('\n'),
    );
    const { debianMirror } = await load();
    expect(debianMirror(etc)).toEqual({ uri: 'http://mirror.invalid/debian', keyring: '/usr/share/keyrings/debian-archive-keyring.gpg' });
  });

  it('reads the one-line format too, with its options', async () => {
    writeFileSync(join(etc, 'sources.list'), '# deb http://old.invalid/debian buster main\ndeb [arch=amd64] http://other.invalid/ubuntu noble main\ndeb [arch=amd64 signed-by=/etc/hostname] http://one.invalid/debian trixie main\n');
    const { debianMirror } = await load();
    expect(debianMirror(etc)).toEqual({ uri: 'http://one.invalid/debian', keyring: '/etc/hostname' });
  });

  it('says so when apt names no Debian archive', async () => {
    writeFileSync(join(etc, 'sources.list'), 'deb http://other.invalid/ubuntu noble main\n');
    const { debianMirror } = await load();
    expect(() => debianMirror(etc)).toThrow(/names no Debian archive with a main component/);
  });

  it('refuses an unknown suite with the usage exit code, and --help says what it does', () => {
    const bad = spawnSync(process.execPath, [SCRIPT, 'jessie'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown suite "jessie": one of unstable, trixie, bookworm');
    const help = spawnSync(process.execPath, [SCRIPT, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: npm run nats-server');
  });

  it('answers from the cache once a suite is fetched: the path of a nats-server that runs', () => {
    const cached = cachedNatsServerBin('unstable');
    if (natsServerVersion(cached) === undefined) throw new Error(`${cached} is missing or does not run: npm run nats-server first (the test command's set-up does)`);
    const run = spawnSync(process.execPath, [SCRIPT, 'sid'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(cached);
    expect(run.stderr).toMatch(/cached: nats-server \d+\.\d+\.\d+ \(Debian unstable\)/);
  });
});
