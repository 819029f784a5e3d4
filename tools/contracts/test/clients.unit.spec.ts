// The reference clients' READMEs show their runnable examples as they are (the e2e test runs them).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

describe('reference client READMEs', () => {
  it.each([
    ['clients/python/README.md', 'clients/python/example.py'],
    ['clients/go/README.md', 'clients/go/example/main.go'],
  ])('%s shows %s verbatim', (readme, example) => {
    expect(readFileSync(join(REPO_ROOT, readme), 'utf8')).toContain(readFileSync(join(REPO_ROOT, example), 'utf8'));
  });
});
