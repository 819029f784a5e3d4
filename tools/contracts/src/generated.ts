/** What `npm run contracts` writes, and which checked-in files differ from it. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authorizationTableMarkdown, buildDocuments, SIGNING_SPEC, visibilityTableMarkdown } from '@agora/contracts';
import { signingTestVectors } from '@agora/identity';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const GENERATED_DIR = join(ROOT, 'libs', 'contracts', 'generated');
export const README = join(ROOT, 'README.md');

export const SPEC_BEGIN = '<!-- signing-spec: generated from libs/contracts/src/signing-spec.ts by npm run contracts -->';
export const SPEC_END = '<!-- /signing-spec -->';
export const AUTHZ_BEGIN = '<!-- authorization: generated from libs/contracts (authorizationTableMarkdown) by npm run contracts -->';
export const AUTHZ_END = '<!-- /authorization -->';
export const VISIBILITY_BEGIN = '<!-- visibility: generated from libs/contracts (visibilityTableMarkdown) by npm run contracts -->';
export const VISIBILITY_END = '<!-- /visibility -->';

/** Relative path under libs/contracts/generated/ -> content. */
export function generatedFiles(): Record<string, string> {
  const { files } = buildDocuments();
  return { ...files, 'test-vectors.json': `${JSON.stringify(signingTestVectors(), null, 2)}\n` };
}

function between(readme: string, begin: string, end: string, content: string): string {
  const from = readme.indexOf(begin);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error(`README.md has no ${begin} ... ${end} markers`);
  return `${readme.slice(0, from + begin.length)}\n${content}${readme.slice(to)}`;
}

/** The README with its generated sections between their markers: the signing specification, the authorization and the visibility tables. */
export function readmeWithSpec(readme: string): string {
  const withTables = between(between(readme, SPEC_BEGIN, SPEC_END, SIGNING_SPEC), AUTHZ_BEGIN, AUTHZ_END, authorizationTableMarkdown());
  return between(withTables, VISIBILITY_BEGIN, VISIBILITY_END, visibilityTableMarkdown());
}

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

/** Paths that differ between what would be generated and the files on disk (README.md included). */
export function staleFiles(dir = GENERATED_DIR): string[] {
  const files = generatedFiles();
  const onDisk = new Set(listFiles(dir));
  const stale = Object.keys(files).filter((path) => !onDisk.has(path) || readFileSync(join(dir, path), 'utf8') !== files[path]);
  for (const path of onDisk) if (!(path in files)) stale.push(path);
  const readme = readFileSync(README, 'utf8');
  if (readmeWithSpec(readme) !== readme) stale.push('README.md');
  return stale.sort();
}
