/**
 * A release as docs/releases.md describes it: `npm run release:pack` packs the SDK and the CLI with their own
 * packers into release/, each tarball's SHA-256 recorded in release/SHA256SUMS (tools/pack-common.mjs) as
 * `sha256sum -c` checks it; one version for the repository and both packages; and the docs show the tarball
 * that version packs, the registry's commands only marked as the form once published. (The packs themselves
 * run in libs/sdk/test/published.e2e.spec.ts and apps/cli/test/published.e2e.spec.ts.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

const version = (path: string) => (JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as { version: string }).version;
/** pack-common.mjs, plain Node as the packers run it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const packCommon = async (): Promise<any> => import(join(REPO_ROOT, 'tools', 'pack-common.mjs'));

/** README.md and every page under docs/, with their paths. */
function pages(): { path: string; text: string }[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.map((name) => join('docs', name))].map((path) => ({ path, text: readFileSync(join(REPO_ROOT, path), 'utf8') }));
}

describe('releases', () => {
  it('npm run release:pack builds, then packs the SDK and the CLI into release/ with their own packers', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['release:pack']).toBe('npm run build && node tools/sdk-pack.mjs --pack release && node tools/cli-pack.mjs --pack release');
    expect(readFileSync(join(REPO_ROOT, '.gitignore'), 'utf8').split('\n')).toContain('/release/');
  });

  it('the repository, the SDK and the CLI carry one version', () => {
    expect([version('libs/sdk/package.json'), version('apps/cli/package.json')]).toEqual([version('package.json'), version('package.json')]);
  });

  it('records each tarball once in SHA256SUMS, as sha256sum -c checks it', async () => {
    const { recordChecksum, CHECKSUMS } = await packCommon();
    const dir = mkdtempSync(join(tmpdir(), 'release-sums-'));
    try {
      writeFileSync(join(dir, 'b-1.0.0.tgz'), 'the CLI');
      writeFileSync(join(dir, 'a-1.0.0.tgz'), 'the SDK, first pack');
      await recordChecksum(dir, 'b-1.0.0.tgz');
      await recordChecksum(dir, 'a-1.0.0.tgz');
      // Packed again: its line replaced, the other kept.
      writeFileSync(join(dir, 'a-1.0.0.tgz'), 'the SDK, packed again');
      await recordChecksum(dir, 'a-1.0.0.tgz');
      const sums = readFileSync(join(dir, CHECKSUMS), 'utf8');
      expect(sums.split('\n').map((line) => line.slice(66))).toEqual(['a-1.0.0.tgz', 'b-1.0.0.tgz', '']);
      const check = spawnSync('sha256sum', ['-c', CHECKSUMS], { cwd: dir, encoding: 'utf8' });
      expect({ code: check.status, out: check.stdout }).toEqual({ code: 0, out: 'a-1.0.0.tgz: OK\nb-1.0.0.tgz: OK\n' });
      writeFileSync(join(dir, 'b-1.0.0.tgz'), 'tampered');
      expect(spawnSync('sha256sum', ['-c', CHECKSUMS], { cwd: dir }).status).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the docs install the tarballs this version packs, and show the registry only as the form once published', () => {
    const current = version('package.json');
    const tarballs = pages().flatMap(({ path, text }) => [...text.matchAll(/agora-governance-(sdk|cli)-(\d+\.\d+\.\d+)\.tgz/g)].map((m) => ({ path, version: m[2] })));
    expect(tarballs.length).toBeGreaterThanOrEqual(4);
    expect(tarballs.filter((t) => t.version !== current)).toEqual([]);
    // A line (or the sentence it continues) that installs from the registry says it is for once the packages are published.
    const unmarked = pages().flatMap(({ path, text }) => {
      const lines = text.split('\n');
      return lines
        .map((line, i) => ({ line, before: lines.slice(Math.max(0, i - 4), i + 1).join(' ') }))
        .filter(({ line }) => /npm install agora-governance-sdk\b|"npx", "args": \["-y", "agora-governance-cli"|npx -y agora-governance-cli/.test(line))
        .filter(({ before }) => !/once (it is |the package is |the packages are )?published|until a release is published|not (on the npm registry|yet)/i.test(before))
        .map(({ line }) => `${path}: ${line.trim()}`);
    });
    expect(unmarked).toEqual([]);
  });
});
