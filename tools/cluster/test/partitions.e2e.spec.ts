// `npm run cluster:partitions -- --small`: each of the three NATS nodes in a network namespace the run
// makes, Agora's processes reaching them across a bridge; the log stream's leader, then a follower,
// then n1 (with one process of every service) cut off from the other two nodes while agents send 150
// signed commands (retried with the same commandId) and race on the same aggregates, on both sides of
// the split. Every acknowledged command's events are in the log exactly once, no stream has two commits
// at one revision, every round and vote is decided once, and `agora audit` finds nothing. Then n3 is
// cut off from its clients: an agent connected to it goes on through another node within 15 s. Everything
// the run made (namespaces, links) is gone after it. Needs root and `ip netns`: skipped, saying so,
// where network namespaces cannot be made. Runs the built processes (`npm run build` first).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clusterRunFailure, freePort, REPO_ROOT, runClusterProgram } from '@agora/testing';

interface Figures {
  scenario: string;
  cut: string;
  leaderBefore: string;
  sent: number;
  acknowledged: number;
  unacknowledged: number;
  lost: number;
  duplicated: number;
  twoAtOneRevision: number;
  roundsClosedOtherThanOnce: number;
  votesDecidedOtherThanOnce: number;
  envelopesStoredOtherThanOnce: number;
  races: { sent: number; acknowledged: number };
  longestWithoutLeaderMs: number;
  audit: string;
}

/** Why this machine cannot make network namespaces (not root, no `ip`), or undefined. */
function cannotMakeNamespaces(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = `agp${process.pid.toString(36)}-jest`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.error || made.status !== 0) return `\`ip netns add\` fails: ${made.error?.message ?? made.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

const why = cannotMakeNamespaces();
if (why) console.warn(`SKIPPED npm run cluster:partitions (e2e): network namespaces cannot be made here (${why}); run the tests as root with iproute2 installed`);

/** The run's own namespaces and bridge (named agp<pid>-...), of any run. */
const leftovers = () => `${spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout}${spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout}`.split('\n').filter((line) => /\bagp[0-9a-z]+-(n\d|br|v\d)/.test(line) && !line.includes('-jest'));

describe('npm run cluster:partitions (e2e)', () => {
  (why ? it.skip : it)('loses, duplicates and decides twice nothing while the leader, a follower, then one node with its side of every service are cut off; an agent whose node is cut off acts again within 15 s; and leaves no namespace behind', async () => {
    for (const app of ['registry', 'proposal', 'tribunal', 'voting', 'gateway', 'projections', 'cli']) {
      if (!existsSync(join(REPO_ROOT, 'apps', app, 'dist', 'main.js'))) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
    }
    const before = leftovers();
    const run = await runClusterProgram('tools/cluster/partitions.mjs', ['--small'], { PORT: String(await freePort()) }, 420_000);
    const { code, output } = run;
    const line = /^partitions: result (.*)$/m.exec(output);
    if (!line) throw clusterRunFailure('the partitions run', run);
    const figures = JSON.parse(line[1]!) as Figures[];
    expect(figures.map((f) => f.scenario)).toEqual(['leader', 'follower', 'split']);
    for (const f of figures) {
      expect({
        scenario: f.scenario,
        sent: f.sent,
        acknowledged: f.acknowledged,
        unacknowledged: f.unacknowledged,
        lost: f.lost,
        duplicated: f.duplicated,
        twoAtOneRevision: f.twoAtOneRevision,
        roundsClosedOtherThanOnce: f.roundsClosedOtherThanOnce,
        votesDecidedOtherThanOnce: f.votesDecidedOtherThanOnce,
        envelopesStoredOtherThanOnce: f.envelopesStoredOtherThanOnce,
        racesAcknowledged: f.races.acknowledged,
        audit: f.audit,
      }).toEqual({
        scenario: f.scenario,
        sent: 150,
        acknowledged: 150,
        unacknowledged: 0,
        lost: 0,
        duplicated: 0,
        twoAtOneRevision: 0,
        roundsClosedOtherThanOnce: 0,
        votesDecidedOtherThanOnce: 0,
        envelopesStoredOtherThanOnce: 0,
        racesAcknowledged: f.races.sent,
        audit: 'exit 0, 0 findings',
      });
      expect(f.races.sent).toBe(38); // 2 proposals x 4 reviews, 2 sessions x 5 votes, 2 envelopes x 10 copies
    }
    // The cuts were the ones named: the leader alone, a node that was not leading, n1 alone.
    const [leader, follower, split] = figures;
    expect(leader!.cut).toBe(`${leader!.leaderBefore} from ${['n1', 'n2', 'n3'].filter((n) => n !== leader!.leaderBefore).join(',')}`);
    expect(follower!.cut.split(' ')[0]).not.toBe(follower!.leaderBefore);
    expect(split!.cut).toBe('n1 from n2,n3');
    // The client link: the agent on n3 noticed the dead link and acted again through another node within 15 s.
    const link = /^partitions: client link: .*; result (.*)$/m.exec(output);
    if (!link) throw clusterRunFailure('the client-link scenario', run);
    const client = JSON.parse(link[1]!) as { cut: string; sent: number; acknowledged: number; lost: number; duplicated: number; movedTo: string; longestOutageMs: number };
    expect({ cut: client.cut, acknowledged: client.acknowledged, lost: client.lost, duplicated: client.duplicated }).toEqual({ cut: 'n3 from its clients', acknowledged: client.sent, lost: 0, duplicated: 0 });
    expect(client.movedTo).not.toMatch(/\.13:4222$/);
    expect(client.longestOutageMs).toBeLessThanOrEqual(15_000);
    expect(output).toMatch(/^partitions: network 10\.99\.\d+\.0\/24: bridge agp[0-9a-z]+-br /m);
    expect(output).toMatch(/^partitions: cluster up: nats:\/\/10\.99\.\d+\.11:4222 nats:\/\/10\.99\.\d+\.12:4222 nats:\/\/10\.99\.\d+\.13:4222; /m);
    expect(output).toMatch(/^partitions: audit exit 0, 0 findings$/m);
    expect(output).toContain('partitions: every scenario: 0 lost, 0 duplicated, no two commits at one revision, every round and vote decided once, every command acknowledged; the audit found nothing');
    expect(code).toBe(0);
    // Torn down: no namespace, bridge or link of this run is left (another suite's cluster, running at the same time, may have its own).
    const prefix = /^partitions: network 10\.99\.\d+\.0\/24: bridge (agp[0-9a-z]+)-br /m.exec(output)![1]!;
    expect(leftovers().filter((l) => l.includes(`${prefix}-`) && !before.includes(l))).toEqual([]);
  }, 450_000);
});
