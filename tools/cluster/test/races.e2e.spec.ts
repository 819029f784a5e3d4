// `npm run cluster:races`, smaller: on the three-node NATS cluster with 2 processes per service,
// through the gateway, 4 proposals whose four reviewers approve at once, 4 voting sessions whose
// validators vote at once, 4 recoveries whose agent and reviewer sign at once, and 4 envelopes each
// sent ten times at once: one decision each, agreeing with the inputs, and `agora audit` finds
// nothing in the log. Runs the built processes (`npm run build` first, as `npm test` does).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clusterRunFailure, freePort, REPO_ROOT, runClusterProgram } from '@agora/testing';

describe('npm run cluster:races (e2e)', () => {
  it('decides each raced aggregate exactly once, as its inputs say, and the log audits clean', async () => {
    for (const app of ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'gateway', 'projections', 'cli']) {
      if (!existsSync(join(REPO_ROOT, 'apps', app, 'dist', 'main.js'))) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
    }
    const run = await runClusterProgram('tools/cluster/races.mjs', ['--rounds', '4'], { AGORA_CLUSTER_REPLICAS: '2', PORT: String(await freePort()) }, 280_000);
    const { code, output } = run;
    const line = /^races: result (.*)$/m.exec(output);
    if (!line) throw clusterRunFailure('the races', run);
    expect(JSON.parse(line[1]!)).toMatchObject({
      rounds: 4,
      reviews: { proposals: 4, allFourReviews: 4, roundClosedOnce: 4, approvedOnce: 4, rejectedOrEscalated: 0 },
      votes: { sessions: 4, decidedOnce: 4, approved: 4 },
      signatures: { recoveries: 4, bothSignedOnce: 4, resolvedOnce: 4 },
      envelope: { envelopes: 4, storedOnce: 4, repliesOk: 40 },
      refusals: 0,
    });
    expect(output).toMatch(/^races: nats-server \d+\.\d+\.\d+ \(/m);
    expect(output).toMatch(/^races: audit exit 0, 0 findings$/m);
    expect(output).toContain('races: every race decided exactly once, as the inputs say; the audit found nothing');
    expect(code).toBe(0);
  }, 300_000);
});
