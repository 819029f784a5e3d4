/**
 * `npm run contracts`: writes the generated JSON Schema and AsyncAPI documents to
 * libs/contracts/generated/ (replacing what is there). `--check` only compares and exits 1 when stale.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDocuments } from './documents.js';

export const GENERATED_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'generated');

export function listFiles(dir: string, base = dir): string[] {
  let out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out = out.concat(listFiles(path, base));
    else out.push(relative(base, path));
  }
  return out.sort();
}

/** Paths that differ between the generated documents and the files on disk. */
export function staleFiles(dir = GENERATED_DIR): string[] {
  const { files } = buildDocuments();
  const onDisk = new Set(listFiles(dir));
  const stale = Object.keys(files).filter((path) => !onDisk.has(path) || readFileSync(join(dir, path), 'utf8') !== files[path]);
  for (const path of onDisk) if (!(path in files)) stale.push(path);
  return stale.sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--help')) {
    console.log('Usage: npm run contracts [-- --check]\n\nWrites JSON Schema and AsyncAPI 3 documents generated from the zod contracts to libs/contracts/generated/.\n  --check  write nothing; exit 1 and list the files that are stale');
    process.exit(0);
  }
  if (process.argv.includes('--check')) {
    const stale = staleFiles();
    if (stale.length > 0) {
      console.error(`stale generated contracts (run npm run contracts):\n  ${stale.join('\n  ')}`);
      process.exit(1);
    }
    console.log('generated contracts are up to date');
  } else {
    const { files } = buildDocuments();
    rmSync(GENERATED_DIR, { recursive: true, force: true });
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(GENERATED_DIR, path)), { recursive: true });
      writeFileSync(join(GENERATED_DIR, path), content);
    }
    console.log(`wrote ${Object.keys(files).length} files to ${relative(process.cwd(), GENERATED_DIR)}`);
  }
}
