// `npm run day -- --minutes 3 --agents 12 --faults partition,replica`: the small day. The cluster with
// every service at two replicas and the read side on PostgreSQL, twelve model-backed agents playing
// every protocol (half over NATS, half through the gateway) against stand-in models as slow as real
// ones, three more through agora mcp, A2A and the governed tool-call proxy, a partition of the log stream's leader and a service replica SIGKILLed, `agora audit --follow`
// and Debian's Prometheus with the project's rules from the start. The run passes its own assertions
// (nothing lost or applied twice, each aggregate decided once, no 'unavailable' outside a fault, the
// audit clean and caught up, the killed replica raising AgoraProcessDown), the agents decided in every
// protocol, and the report folder holds the page with its plots, summary.json and every process's log.
// Needs root (network namespaces), Debian's prometheus and the build (`npm run build` first).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterRunFailure, REPO_ROOT, runClusterProgram } from '@agora/testing';

interface Check {
  name: string;
  ok: boolean;
  skipped?: string;
  detail: string;
}
interface Summary {
  verdict: string;
  commands: { sent: number; acknowledged: number; byType: Record<string, number> };
  decisions: { count: number; byProtocol: Record<string, { count: number; p50: number; p99: number }> };
  faults: { kind: string; what: string; startedAt: number; settledAt: number }[];
  alerts: { alert: string; state: string; process?: string; from: number }[];
  fleet: { loops: number; overNats: number; modelCalls: number; modelRequests: number };
  ways: Record<string, { commands: number; acknowledged: number; decisions: Record<string, number> }>;
  log: { events: number };
  checks: Check[];
}

function cannotRun(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  if (!existsSync(process.env['PROMETHEUS_BIN'] ?? '/usr/bin/prometheus')) return 'no prometheus';
  const probe = `agp${process.pid.toString(36)}-jestday`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.error || made.status !== 0) return `\`ip netns add\` fails: ${made.error?.message ?? made.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

const why = cannotRun();
if (why) console.warn(`SKIPPED npm run day (e2e): ${why}; run the tests as root with iproute2 and Debian's prometheus installed`);

describe('npm run day, small (e2e)', () => {
  (why ? it.skip : it)('runs three minutes of twelve agents through a partition and a killed replica, passes its assertions and writes the report', async () => {
    for (const app of ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'chamber', 'debate', 'gateway', 'projections', 'cli']) {
      if (!existsSync(join(REPO_ROOT, 'apps', app, 'dist', 'main.js'))) throw new Error(`apps/${app}/dist/main.js is missing: npm run build first`);
    }
    const out = mkdtempSync(join(tmpdir(), 'agora-day-report-'));
    try {
      // A 10 s cut: a command refused from the cut's start until it heals stays under the 15 s the run
      // allows. With 15 s, a CI machine running another cluster suite beside it saw 15.6 s. A refusal
      // that outlasts a leader's partition is issue 47's open failure, which the hour shows (docs/day.md).
      const run = await runClusterProgram('tools/day/day.mjs', ['--minutes', '3', '--agents', '12', '--faults', 'partition,replica', '--cut', '10', '--think', '8', '--out', out], {}, 600_000);
      if (!/^day: result /m.test(run.output)) throw clusterRunFailure('the day', run);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
      const failed = summary.checks.filter((c) => !c.ok);
      expect({ failed, code: run.code }).toEqual({ failed: [], code: 0 });
      expect(summary.verdict).toBe('passed');
      const judged = summary.checks.filter((c) => !c.skipped).map((c) => c.name);
      expect(judged).toEqual(expect.arrayContaining(['no acknowledged command lost', 'no command applied twice', 'every aggregate decided at most once', 'the audit clean at the end', 'the audit never more than 5 s behind outside a fault window', 'each fault that stops a process raised AgoraProcessDown', 'every way in had a decision']));

      // The agents did what a day is made of: every kind of command acknowledged, decisions in the
      // tribunal and the vote, model calls through the stand-ins, half the agents over NATS.
      expect(Object.keys(summary.commands.byType)).toEqual(expect.arrayContaining(['SubmitProposal', 'CreateVotingSession', 'ReportHealth', 'OpenDebate', 'ProposeChamberSession', 'UpdateAgent']));
      expect(summary.commands.acknowledged).toBeGreaterThan(100);
      expect(summary.decisions.byProtocol['tribunal']?.count).toBeGreaterThan(0);
      expect(summary.decisions.byProtocol['voting']?.count).toBeGreaterThan(0);
      // A recovery ends whoever is drawn to review it (the agents of the other ways in take their turns too).
      expect(summary.decisions.byProtocol['dialectic']?.count).toBeGreaterThan(0);
      expect(summary.fleet.modelCalls).toBeGreaterThan(20);
      expect(summary.fleet.overNats).toBe(6);
      expect(summary.log.events).toBeGreaterThan(summary.commands.acknowledged);
      // The other ways in: proposals through agora mcp, votes as A2A tasks, credentials through the proxy once voted on.
      expect(summary.ways['mcp']?.acknowledged).toBeGreaterThan(0);
      expect(summary.ways['a2a']?.acknowledged).toBeGreaterThan(0);
      expect(Object.keys(summary.ways['proxy']?.decisions ?? {})).toEqual(expect.arrayContaining([expect.stringMatching(/^(ran|denied)$/)]));

      // The faults ran, and the killed replica raised AgoraProcessDown while it was down.
      expect(summary.faults.map((f) => f.kind)).toEqual(['partition', 'replica']);
      const replica = summary.faults[1]!;
      expect(summary.alerts.some((a) => a.alert === 'AgoraProcessDown' && a.from >= replica.startedAt && a.from <= replica.settledAt + 30_000)).toBe(true);

      // The report: one page with every plot inline, the plots as files, the logs.
      const html = readFileSync(join(out, 'report.html'), 'utf8');
      expect(html.match(/<svg /g)?.length).toBe(8);
      expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
      expect(html).toContain(summary.faults[0]!.what);
      expect(readdirSync(join(out, 'plots')).sort()).toEqual(['alerts.svg', 'audit-lag.svg', 'commands.svg', 'decision-latency.svg', 'event-loop.svg', 'refusals-services.svg', 'refusals.svg', 'rss.svg']);
      expect(readdirSync(join(out, 'logs'))).toEqual(expect.arrayContaining(['gateway.log', 'tribunal-1.log', 'audit.log', 'prometheus.log', 'nats-n1.log']));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 660_000);
});
