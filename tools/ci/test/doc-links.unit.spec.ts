/**
 * Every relative link in README.md, CHANGELOG.md, CONTRIBUTING.md, SECURITY.md and docs/**\/*.md resolves: the file (or folder) it names exists,
 * and an `#anchor` names a heading of the target, slugged as GitHub does (lower case, punctuation
 * dropped, spaces to hyphens, `-1`, `-2` ... for repeated headings). Links in code are not links.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

/** The text with fenced code blocks and inline code spans blanked (links there are not links). */
function withoutCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, '``');
    })
    .join('\n');
}

/** GitHub's anchor for a heading's text (github-slugger on the rendered text). */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings, repeated ones numbered as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target `[text](target)` outside code. */
export function linkTargets(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

/** The broken relative links of one file, as `file: target (why)`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(readFileSync(file, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ...
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    const where = `${relative(REPO_ROOT, file)}: ${target}`;
    if (!existsSync(resolved)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(`${where} (an anchor into a file that is not Markdown)`);
    } else if (!anchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) {
      broken.push(`${where} (no heading with that anchor)`);
    }
  }
  return broken;
}

describe('documentation links', () => {
  const files = [...['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'SECURITY.md'].map((name) => join(REPO_ROOT, name)), ...markdownFiles(join(REPO_ROOT, 'docs'))];

  it('slugs headings as GitHub does', () => {
    expect(slug('Tamper evidence and `agora audit`')).toBe('tamper-evidence-and-agora-audit');
    expect(slug('Trust: service identities, who may act, the commit chain')).toBe('trust-service-identities-who-may-act-the-commit-chain');
    expect(slug('Distributed, on one machine')).toBe('distributed-on-one-machine');
    expect(slug('The tribunal (seed 000)')).toBe('the-tribunal-seed-000');
    expect(slug('AGORA_READS and read-only keys')).toBe('agora_reads-and-read-only-keys');
    expect([...anchors('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n')]).toEqual(['a', 'notes', 'notes-1']);
    expect(linkTargets('[a](b.md#c) `[x](y.md)` [d](https://e "title")')).toEqual(['b.md#c', 'https://e']);
  });

  it('reports a missing file and a missing anchor', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doc-links-'));
    try {
      writeFileSync(join(dir, 'b.md'), '# B\n## Here\n');
      writeFileSync(join(dir, 'a.md'), '[ok](b.md#here) [ok](#a) [gone](c.md) [bad](b.md#there) [bad](#nowhere)\n# A\n');
      expect(brokenLinks(join(dir, 'a.md')).map((b) => b.slice(b.indexOf(': ') + 2))).toEqual([
        'c.md (no such file)',
        'b.md#there (no heading with that anchor)',
        '#nowhere (no heading with that anchor)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds README.md and the docs/ tree', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files.some((f) => f.includes(join('docs', 'protocols')))).toBe(true);
  });

  it('every relative link resolves to a file that exists, and every anchor to a heading of it', () => {
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });
});
