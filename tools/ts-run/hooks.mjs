import { transform } from '@swc/core';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const swc = JSON.parse(readFileSync(new URL('../../.swcrc', import.meta.url), 'utf8'));
delete swc.$schema;

export async function resolve(specifier, context, next) {
  // Sources import siblings as `./x.js`; from a .ts parent, map to `./x.ts` when that file exists.
  if (context.parentURL?.endsWith('.ts') && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true, format: 'module' };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await readFile(file, 'utf8'), { ...swc, swcrc: false, filename: file, sourceMaps: 'inline' });
  return { format: 'module', source: code, shortCircuit: true };
}
