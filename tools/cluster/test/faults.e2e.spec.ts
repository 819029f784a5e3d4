// `npm run cluster:faults`, smaller: on the three-node NATS cluster with two registry replicas, 300
// signed commands per scenario with 32 in flight, clients retrying with the same commandId, while a
// NATS node, the node leading the log stream, and a node with a registry replica are SIGKILLed and
// started again, half the commands racing on 4 hot agents. Every acknowledged command's event is in
// the log exactly once, and `agora audit` finds nothing in the whole log. Runs the built
// processes (`npm run build` first, as `npm test` does).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clusterRunFailure, REPO_ROOT, runClusterProgram } from '@agora/testing';

interface Figures {
  scenario: string;
  killed: string;
  leaderBefore: string;
  sent: number;
  acknowledged: number;
  retries: number;
  unacknowledged: number;
  lost: number;
  duplicated: number;
  longestGapMs: number;
}

describe('npm run cluster:faults (e2e)', () => {
  it('loses and duplicates no acknowledged command when a NATS node, the log stream leader, and a node with a service replica are killed under load', async () => {
    for (const app of ['registry', 'cli']) {
      if (!existsSync(join(REPO_ROOT, 'apps', app, 'dist', 'main.js'))) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
    }
    const run = await runClusterProgram('tools/cluster/faults.mjs', ['--count', '300', '--inflight', '32', '--down', '2', '--agents', '32'], { AGORA_CLUSTER_REPLICAS: '2' }, 280_000);
    const { code, output } = run;
    const line = /^faults: result (.*)$/m.exec(output);
    if (!line) throw clusterRunFailure('the fault run', run);
    const figures = JSON.parse(line[1]!) as Figures[];
    expect(figures.map((f) => f.scenario)).toEqual(['follower', 'leader', 'node+replica']);
    for (const f of figures) {
      expect({ scenario: f.scenario, sent: f.sent, acknowledged: f.acknowledged, unacknowledged: f.unacknowledged, lost: f.lost, duplicated: f.duplicated }).toEqual({
        scenario: f.scenario,
        sent: 300,
        acknowledged: 300,
        unacknowledged: 0,
        lost: 0,
        duplicated: 0,
      });
    }
    // The faults happened as named: the leader scenario killed the node leading the log stream,
    // the follower scenario another one, and the last one a node with a registry replica.
    const [follower, leader, nodeAndReplica] = figures;
    expect(leader!.killed).toBe(`nats-${leader!.leaderBefore}`);
    expect(follower!.killed).not.toBe(`nats-${follower!.leaderBefore}`);
    expect(nodeAndReplica!.killed).toMatch(/^nats-n\d \+ registry-\d$/);
    // Commands were sent again (a kill mid-load leaves some unanswered) and still landed once.
    expect(figures.reduce((sum, f) => sum + f.retries, 0)).toBeGreaterThan(0);
    expect(output).toContain('faults: every scenario: 0 lost, 0 duplicated, every command acknowledged; the audit found nothing');
    // The whole log after the faults, audited: signatures under the services' shared keys, chains, decisions.
    expect(output).toMatch(/^faults: audit exit 0, 0 findings$/m);
    expect(code).toBe(0);
  }, 300_000);
});
