// What tools/sdk-pack.mjs and tools/cli-pack.mjs share: package names of import specifiers, and `--pack <dir>`.
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
export const packageName = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** With `--pack <dir>` on the command line: `npm pack`s `outDir` into <dir> and prints the tarball's path. */
export async function packIfAsked(outDir) {
  const at = process.argv.indexOf('--pack');
  if (at < 0) return;
  const destination = resolve(process.argv[at + 1] ?? '.');
  await mkdir(destination, { recursive: true });
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: outDir, encoding: 'utf8' }));
  console.log(join(destination, packed.filename));
}
