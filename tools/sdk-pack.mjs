#!/usr/bin/env node
// Builds @agora/sdk as the package a user installs: one ESM bundle with the workspace libraries it uses
// inside it, their type declarations beside it, and a package.json whose dependencies are public npm
// packages only. The workspace keeps using libs/sdk/dist (tools/build.mjs); this writes libs/sdk/dist-publish.
// Usage: node tools/sdk-pack.mjs [--pack <dir>]   (--pack also runs `npm pack` into <dir>, records its SHA-256 in <dir>/SHA256SUMS
// and prints the tarball; npm run release:pack packs the SDK and the CLI into release/)
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFile, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageName, packIfAsked } from './pack-common.mjs';

/** The SDK's name on the npm registry (checked free with `npm view`); docs/sdk.md and README.md use it. */
const PUBLISHED_NAME = 'agora-governance-sdk';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sdkDir = join(root, 'libs', 'sdk');
const outDir = join(sdkDir, 'dist-publish');
const typesDir = join(outDir, 'types');
const readJson = async (path) => JSON.parse(await readFile(path, 'utf8'));
const fail = (message) => {
  console.error(`sdk:pack: ${message}`);
  process.exit(1);
};

await rm(outDir, { recursive: true, force: true });

// 1. The JavaScript: every @agora/* import bundled in, every other bare import left to npm.
const bundled = await build({
  entryPoints: [join(sdkDir, 'src', 'index.ts')],
  outfile: join(outDir, 'index.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['agora-source'],
  metafile: true,
  logLevel: 'warning',
  plugins: [{ name: 'public-packages-external', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith('@agora/') ? undefined : { path: a.path, external: true })) }],
});
const externals = new Set(Object.values(bundled.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)));
const forbidden = [...externals, ...Object.keys(bundled.metafile.inputs)].filter((p) => /@nestjs|reflect-metadata|rxjs/.test(p));
if (forbidden.length) fail(`the SDK's import graph reaches NestJS: ${forbidden.join(', ')}`);

// 2. The declarations: tsc emits them for the SDK and the workspace sources it reaches; the @agora/*
// specifiers become relative paths, and only the files the SDK's entry reaches are kept.
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(sdkDir, 'tsconfig.publish.json')], { stdio: 'inherit' });
const entry = join(typesDir, 'sdk', 'src', 'index.d.ts');
const specifier = /(from\s+|import\s*\(\s*|import\s+)(['"])([^'"]+)\2/g;
const kept = new Set();
const typeDependencies = new Set();
const visit = async (file) => {
  if (kept.has(file)) return;
  kept.add(file);
  let text = await readFile(file, 'utf8');
  const next = [];
  text = text.replace(specifier, (whole, lead, quote, spec) => {
    let target = spec;
    const workspace = /^@agora\/([a-z0-9-]+)(?:\/([a-z0-9-]+))?$/.exec(spec);
    if (workspace) {
      const path = join(typesDir, workspace[1], 'src', `${workspace[2] ?? 'index'}.js`);
      target = relative(dirname(file), path);
      if (!target.startsWith('.')) target = `./${target}`;
    } else if (!spec.startsWith('.')) {
      if (!spec.startsWith('node:')) typeDependencies.add(packageName(spec));
      return whole;
    }
    next.push(resolve(dirname(file), target).replace(/\.js$/, '.d.ts'));
    return `${lead}${quote}${target}${quote}`;
  });
  if (/['"]@agora\//.test(text)) fail(`${relative(outDir, file)} still imports a workspace package`);
  await writeFile(file, text);
  for (const path of next) await visit(path);
};
await visit(entry);
const prune = async (dir) => {
  for (const item of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) {
      await prune(path);
      if ((await readdir(path)).length === 0) await rm(path, { recursive: true });
    } else if (!kept.has(path)) await rm(path);
  }
};
await prune(typesDir);

// 3. package.json: public dependencies at the versions the workspace pins, `ai` an optional peer.
const sdk = await readJson(join(sdkDir, 'package.json'));
const workspace = await readJson(join(root, 'package.json'));
const pinned = { ...workspace.devDependencies, ...workspace.dependencies };
const peers = Object.keys(sdk.peerDependencies ?? {});
const dependencies = {};
for (const name of [...new Set([...externals, ...typeDependencies].filter((p) => !p.startsWith('node:')).map(packageName))].sort()) {
  if (peers.includes(name)) continue;
  if (!pinned[name]) fail(`${name} is imported but not pinned in the root package.json`);
  dependencies[name] = pinned[name];
}
const types = `./${relative(outDir, entry)}`;
const manifest = {
  // Published under a name free on the npm registry and unlike anyone else's (`agora` is another project's,
  // and the @agora scope is not ours); inside the workspace it stays @agora/sdk.
  name: PUBLISHED_NAME,
  version: sdk.version,
  description: sdk.description,
  license: sdk.license,
  type: 'module',
  engines: sdk.engines,
  exports: { '.': { types, default: './index.js' } },
  types,
  files: ['index.js', 'types', 'README.md', 'LICENSE'],
  sideEffects: false,
  dependencies,
  peerDependencies: sdk.peerDependencies,
  peerDependenciesMeta: sdk.peerDependenciesMeta,
};
await writeFile(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
await copyFile(join(root, 'docs', 'sdk.md'), join(outDir, 'README.md'));
await copyFile(join(root, 'LICENSE'), join(outDir, 'LICENSE'));
console.log(`sdk:pack: ${relative(root, outDir)}: index.js from ${Object.keys(bundled.metafile.inputs).length} sources, ${kept.size} declaration files; dependencies ${Object.keys(dependencies).join(', ')}`);

await packIfAsked(outDir);
