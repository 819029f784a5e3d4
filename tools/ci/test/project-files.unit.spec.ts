/**
 * What a project people adopt has, as the repository keeps it: a CI workflow in GitHub's format that runs the
 * one CI script (`bash .ci/run`, which runs the README's test command) within the 25 minutes CI is given, a
 * changelog with an "Unreleased" section, how to contribute and how to report a vulnerability.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '@agora/testing';

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { 'runs-on': string; container?: string; 'timeout-minutes': number; steps: { run?: string; uses?: string }[] }>;
}

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('project files', () => {
  it('.github/workflows/ci.yml runs bash .ci/run on pushes and pull requests, on Node 24, within 25 minutes', () => {
    const workflow = parse(read('.github/workflows/ci.yml')) as Workflow;
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    const jobs = Object.values(workflow.jobs);
    expect(jobs).toHaveLength(1);
    const [job] = jobs;
    expect(job!.container).toMatch(/^node:24-/);
    expect(job!['timeout-minutes']).toBeLessThanOrEqual(25);
    expect(job!.steps.filter((step) => step.run !== undefined).map((step) => step.run)).toEqual(['bash .ci/run']);
    expect(read('.ci/run')).toMatch(/^npm test$/m);
  });

  it('CHANGELOG.md keeps an Unreleased section; CONTRIBUTING.md and SECURITY.md say how to test and how to report', () => {
    expect(read('CHANGELOG.md')).toMatch(/^## Unreleased$/m);
    expect(read('CONTRIBUTING.md')).toContain('npm test');
    expect(read('CONTRIBUTING.md')).toContain('bash .ci/run');
    expect(read('SECURITY.md')).toMatch(/^## Reporting a vulnerability$/m);
    expect(read('SECURITY.md')).toMatch(/^## Supported versions$/m);
  });
});
