/**
 * `npm run contracts`: writes the documents generated from the zod contracts (JSON Schema,
 * AsyncAPI 3, OpenAPI 3.1) and the signing test vectors to libs/contracts/generated/ (replacing
 * what is there), and the signing specification, the authorization, visibility and subjects tables
 * into docs/ between their markers.
 * `--check` writes nothing and exits 1 when anything is stale.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_DIR, generatedFiles, staleFiles, writeGeneratedSections } from './generated.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--help')) {
    console.log(
      'Usage: npm run contracts [-- --check]\n\nWrites JSON Schema, AsyncAPI 3 and OpenAPI 3.1 documents generated from the zod contracts, and the signing test vectors, to libs/contracts/generated/, and the signing specification, the authorization, visibility and subjects tables into docs/ (between their markers).\n  --check  write nothing; exit 1 and list the files that are stale',
    );
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
    const files = generatedFiles();
    rmSync(GENERATED_DIR, { recursive: true, force: true });
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(GENERATED_DIR, path)), { recursive: true });
      writeFileSync(join(GENERATED_DIR, path), content);
    }
    const docs = writeGeneratedSections();
    console.log(`wrote ${Object.keys(files).length} files to ${relative(process.cwd(), GENERATED_DIR)} and the signing specification, authorization, visibility and subjects tables to ${docs.join(', ')}`);
  }
}
