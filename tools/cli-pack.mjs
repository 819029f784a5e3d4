#!/usr/bin/env node
// Builds the `agora` command as the package a user installs or runs with npx: one ESM bundle of
// apps/cli and the workspace libraries it uses, from what the workspace build produced (dist/, so
// NestJS's decorator metadata is as tsc emitted it), the audit's worker beside it, the fleet's shipped
// prompts, and a package.json whose dependencies are public npm packages only, bin `agora`.
// Usage: npm run build && node tools/cli-pack.mjs [--pack <dir>]   (--pack also runs `npm pack` into <dir> and records its
// SHA-256 in <dir>/SHA256SUMS; npm run release:pack packs the SDK and the CLI into release/)
import { build } from 'esbuild';
import { cp, copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageName, packIfAsked } from './pack-common.mjs';

/** The CLI's name on the npm registry (checked free with `npm view`); its command stays `agora`. */
const PUBLISHED_NAME = 'agora-governance-cli';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cliDir = join(root, 'apps', 'cli');
const outDir = join(cliDir, 'dist-publish');
// lib/cli/: the fleet's prompts are found at ../../prompts from the code (libs/participants' layout).
const codeDir = join(outDir, 'lib', 'cli');
const readJson = async (path) => JSON.parse(await readFile(path, 'utf8'));
const fail = (message) => {
  console.error(`cli:pack: ${message}`);
  process.exit(1);
};

if (!existsSync(join(cliDir, 'dist', 'main.js'))) fail('apps/cli/dist/main.js is missing: run npm run build first');
await rm(outDir, { recursive: true, force: true });

const bundled = await build({
  entryPoints: { main: join(cliDir, 'dist', 'main.js'), 'verify-worker': join(cliDir, 'dist', 'audit', 'verify-worker.js') },
  outdir: codeDir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  metafile: true,
  logLevel: 'warning',
  // CommonJS packages bundled into ESM still call require(): give them one.
  banner: { js: "import { createRequire as __agoraRequire } from 'node:module'; const require = __agoraRequire(import.meta.url);" },
  plugins: [{ name: 'public-packages-external', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith('@agora/') ? undefined : { path: a.path, external: true })) }],
});
const externals = new Set(Object.values(bundled.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)));

const workspace = await readJson(join(root, 'package.json'));
// The versions the workspace pins: the root's, and those the bundled packages pin themselves.
const pinned = { ...workspace.devDependencies, ...workspace.dependencies };
for (const input of Object.keys(bundled.metafile.inputs)) {
  const match = /^(libs|apps)\/([a-z0-9-]+)\//.exec(relative(root, resolve(input)));
  if (match) Object.assign(pinned, (await readJson(join(root, match[1], match[2], 'package.json'))).dependencies ?? {});
}
const dependencies = {};
for (const name of [...new Set([...externals].filter((p) => !p.startsWith('node:')).map(packageName))].sort()) {
  if (!pinned[name]) fail(`${name} is imported but not pinned in the root package.json`);
  dependencies[name] = pinned[name];
}
const cli = await readJson(join(cliDir, 'package.json'));
const manifest = {
  name: PUBLISHED_NAME,
  version: cli.version,
  description: cli.description,
  license: 'Apache-2.0',
  type: 'module',
  engines: workspace.engines,
  bin: { agora: 'lib/cli/main.js' },
  files: ['lib', 'prompts', 'README.md', 'LICENSE'],
  dependencies,
};
await writeFile(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
await copyFile(join(cliDir, 'README.md'), join(outDir, 'README.md'));
await copyFile(join(root, 'LICENSE'), join(outDir, 'LICENSE'));
await cp(join(root, 'libs', 'participants', 'prompts'), join(outDir, 'prompts'), { recursive: true });
console.log(`cli:pack: ${relative(root, outDir)}: lib/cli/main.js from ${Object.keys(bundled.metafile.inputs).length} sources; dependencies ${Object.keys(dependencies).join(', ')}`);

await packIfAsked(outDir);
