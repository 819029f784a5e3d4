// What tools/sdk-pack.mjs and tools/cli-pack.mjs share: package names of import specifiers, and `--pack <dir>`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
export const packageName = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** The checksums file beside the tarballs: `<sha256>  <file>` lines, as `sha256sum` writes them and `sha256sum -c` checks them. */
export const CHECKSUMS = 'SHA256SUMS';

/** Writes `file`'s SHA-256 into <dir>/SHA256SUMS, replacing the line of an earlier file of that name and keeping the others. */
export async function recordChecksum(dir, file) {
  const digest = createHash('sha256').update(await readFile(join(dir, file))).digest('hex');
  const path = join(dir, CHECKSUMS);
  const kept = existsSync(path) ? (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '' && !line.endsWith(`  ${file}`)) : [];
  await writeFile(path, `${[...kept, `${digest}  ${file}`].sort((a, b) => a.slice(66).localeCompare(b.slice(66))).join('\n')}\n`);
  return digest;
}

/**
 * With `--pack <dir>` on the command line: `npm pack`s `outDir` into <dir>, records the tarball's SHA-256 in
 * <dir>/SHA256SUMS and prints the tarball's path.
 */
export async function packIfAsked(outDir) {
  const at = process.argv.indexOf('--pack');
  if (at < 0) return;
  const destination = resolve(process.argv[at + 1] ?? '.');
  await mkdir(destination, { recursive: true });
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: outDir, encoding: 'utf8' }));
  await recordChecksum(destination, packed.filename);
  console.log(join(destination, packed.filename));
}
