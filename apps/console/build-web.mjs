#!/usr/bin/env node
// Bundles the console (web/) with esbuild into dist/public: one script and one stylesheet with
// content hashes in their names (served as immutable), and index.html naming them (served
// no-cache). No CDN: everything the page needs is in dist/public. Type checking is
// `tsc -p apps/console/tsconfig.json` (npm run typecheck).
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const outdir = join(root, 'dist', 'public');
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'web', 'main.tsx') },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  conditions: ['agora-source'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: 'linked',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  outdir,
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => /^app-.*\.js$/.test(name));
const style = outputs.find((name) => /^app-.*\.css$/.test(name));
if (!script || !style) throw new Error(`esbuild wrote no app script or stylesheet: ${outputs.join(', ')}`);
const template = await readFile(join(root, 'web', 'index.html'), 'utf8');
await writeFile(join(outdir, 'index.html'), template.replace('%SCRIPT%', `/${script}`).replace('%STYLE%', `/${style}`));
await writeFile(join(outdir, 'favicon.svg'), await readFile(join(root, 'web', 'favicon.svg')));
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
console.log(`console: ${outputs.length + 2} files into dist/public (${(bytes / 1024).toFixed(0)} KiB with source maps)`);
