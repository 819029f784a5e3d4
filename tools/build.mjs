#!/usr/bin/env node
// Transpiles one package's src/ to dist/ with swc (type checking is `npm run typecheck`).
// Usage, from a package directory: node ../../tools/build.mjs
import { transformFile } from '@swc/core';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const swcOptions = JSON.parse(await readFile(join(dirname(fileURLToPath(import.meta.url)), '..', '.swcrc'), 'utf8'));
delete swcOptions.$schema;
const pkgDir = process.cwd();
const srcDir = join(pkgDir, 'src');
const outDir = join(pkgDir, 'dist');

async function* sources(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.spec.ts')) yield path;
  }
}

await rm(outDir, { recursive: true, force: true });
let count = 0;
for await (const file of sources(srcDir)) {
  const rel = relative(srcDir, file).replace(/\.ts$/, '.js');
  const target = join(outDir, rel);
  const out = await transformFile(file, { ...swcOptions, swcrc: false, filename: file, sourceFileName: relative(dirname(target), file) });
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, `${out.code}\n//# sourceMappingURL=${rel.split('/').pop()}.map\n`);
  if (out.map) await writeFile(`${target}.map`, out.map);
  count++;
}
console.log(`built ${count} files into ${relative(process.cwd(), outDir) || '.'}`);
