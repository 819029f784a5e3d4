/**
 * The repository stands alone: no file in it cites a design document that is not in it (`DESIGN.md`, or a
 * path outside the repository such as `../shared`), and the design decisions it cites are the records in
 * docs/decisions/, each linked from that folder's index.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

/** Where a design document outside the repository is cited: `DESIGN.md`, `DESIGN decision 8`, `../shared/...`. */
const OUTSIDE = /\bDESIGN(\.md)?\b(?! *=)|(\\?\.){2}\\?\/shared\b/;

/** Text files git tracks (and the new ones it would add), as a fresh clone has them. */
function trackedTextFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' });
  return listed
    .split('\n')
    .filter((file) => /\.(md|ts|tsx|mts|mjs|js|json|ya?ml|sh|py|go|conf|txt)$|(^|\/)(run|Dockerfile)$/.test(file))
    .filter((file) => !file.startsWith('libs/contracts/generated/'));
}

describe('citations', () => {
  const files = trackedTextFiles();

  it('finds the tracked files', () => {
    expect(files.length).toBeGreaterThan(500);
    expect(files).toContain('README.md');
  });

  it('no file cites DESIGN.md or a path outside the repository', () => {
    const citing = files.filter((file) => {
      let text: string;
      try {
        text = readFileSync(join(REPO_ROOT, file), 'utf8');
      } catch {
        return false; // deleted in the working tree
      }
      return text.split('\n').some((line) => OUTSIDE.test(line));
    });
    expect(citing.filter((file) => file !== 'tools/ci/test/citations.unit.spec.ts')).toEqual([]);
  });

  it('every decision record is numbered, has a status and is in the index of docs/decisions', () => {
    const dir = join(REPO_ROOT, 'docs', 'decisions');
    const records = readdirSync(dir).filter((name) => name !== 'README.md');
    const index = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(records.length).toBeGreaterThanOrEqual(15);
    for (const record of records) {
      const number = /^(\d{4})-[a-z0-9-]+\.md$/.exec(record)?.[1];
      expect({ record, numbered: number !== undefined }).toEqual({ record, numbered: true });
      const text = readFileSync(join(dir, record), 'utf8');
      expect(text.startsWith(`# ${Number(number)}. `)).toBe(true);
      expect(text).toMatch(/^Status: (accepted|superseded by .+|proposed)$/m);
      expect(index).toContain(`](${record})`);
    }
  });
});
