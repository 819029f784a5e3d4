/**
 * The metrics and the alerting rules against Prometheus' own tools, when they are installed
 * (Debian/Ubuntu: `apt-get install prometheus` provides /usr/bin/prometheus and /usr/bin/promtool;
 * PROMETHEUS_BIN / PROMTOOL_BIN point elsewhere). Without them these tests are skipped, and say so.
 * - promtool: `check metrics` on a real scrape of /metrics, `check rules` and `check config` on
 *   deploy/prometheus, and `test rules` (the rules' own unit tests, test/support/agora-rules.test.yml);
 * - a real Prometheus (own storage, 1 s scrapes of the service, the deploy rules loaded) until its
 *   query API returns the challenge rate and it has evaluated every rule without error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@agora/testing';
import type { RunningProjections } from '../src/projections-service.js';
import { writeFleet } from './support/fleet.js';
import { startProjectionsOver, type ProjectionsOver } from './support/service.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, '../../..');
const RULES = join(REPO_ROOT, 'deploy/prometheus/agora-rules.yml');
const PROMETHEUS = process.env['PROMETHEUS_BIN'] ?? '/usr/bin/prometheus';
const PROMTOOL = process.env['PROMTOOL_BIN'] ?? '/usr/bin/promtool';
const hasPrometheus = existsSync(PROMETHEUS);
/** Recording and alerting rules in deploy/prometheus/agora-rules.yml. */
const RULE_COUNT = 64;
const hasPromtool = existsSync(PROMTOOL);
const INSTALL = 'install it with `apt-get install prometheus`, or set PROMETHEUS_BIN / PROMTOOL_BIN';

if (!hasPromtool) console.warn(`SKIPPED promtool checks of /metrics and deploy/prometheus: ${PROMTOOL} not found; ${INSTALL}`);
if (!hasPrometheus) console.warn(`SKIPPED the real Prometheus test: ${PROMETHEUS} not found; ${INSTALL}`);

interface Run {
  code: number | null;
  output: string;
}

/** Runs a tool to completion with `input` on stdin: exit code and stdout + stderr. */
function run(command: string, args: readonly string[], input?: string, cwd = REPO_ROOT): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, output }));
    child.stdin.end(input ?? '');
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

async function stop(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

(hasPrometheus || hasPromtool ? describe : describe.skip)('the projections metrics in Prometheus tools', () => {
  let running: RunningProjections;
  let close: ProjectionsOver['close'];
  const metricsPort = () => Number(new URL(running.metricsUrl).port);

  beforeAll(async () => {
    ({ running, close } = await startProjectionsOver('projections-prom', writeFleet));
  });

  afterAll(() => close?.());

  (hasPromtool ? it : it.skip)(`promtool check metrics finds nothing to lint in the agora metrics of /metrics${hasPromtool ? '' : ` (skipped: ${PROMTOOL} not found)`}`, async () => {
    const body = await (await fetch(running.metricsUrl)).text();
    expect(body).toContain('agora_tribunal_challenge_rate_ratio 0.4');
    const result = await run(PROMTOOL, ['check', 'metrics'], body);
    const problems = result.output.split('\n').filter((line) => line.trim() !== '');
    // Nothing about ours. prom-client's default metrics carry three known ones (gauges named
    // nodejs_active_*_total), which make promtool exit non-zero: those, and only those, are tolerated.
    expect(problems.filter((line) => line.startsWith('agora_'))).toEqual([]);
    expect(problems.filter((line) => !/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/.test(line))).toEqual([]);
    expect(result.code === 0 || problems.length > 0).toBe(true);
  });

  (hasPromtool ? it : it.skip)(`promtool accepts deploy/prometheus (rules and config) and passes the rules' unit tests${hasPromtool ? '' : ` (skipped: ${PROMTOOL} not found)`}`, async () => {
    const rules = await run(PROMTOOL, ['check', 'rules', RULES]);
    expect(rules.output).toContain(`SUCCESS: ${RULE_COUNT} rules found`);
    expect(rules.code).toBe(0);
    const config = await run(PROMTOOL, ['check', 'config', join(REPO_ROOT, 'deploy/prometheus/prometheus.yml')]);
    expect(config.output).toContain('SUCCESS: 1 rule files found');
    expect(config.code).toBe(0);
    const tests = await run(PROMTOOL, ['test', 'rules', 'agora-rules.test.yml'], undefined, join(HERE, 'support'));
    expect(tests.output).toContain('SUCCESS');
    expect(tests.code).toBe(0);
    // The unit tests take promtool about 3 s of CPU, more on a loaded machine.
  }, 120_000);

  (hasPrometheus ? it : it.skip)(
    `a real Prometheus scrapes the challenge rate and evaluates the deploy rules${hasPrometheus ? '' : ` (skipped: ${PROMETHEUS} not found)`}`,
    async () => {
      const promDir = await mkdtemp(join(tmpdir(), 'agora-prometheus-'));
      const port = await freePort();
      const config = [
        'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES)}]`,
        'scrape_configs:',
        '  - job_name: agora-projections',
        '    metrics_path: /metrics',
        `    static_configs: [{ targets: ["127.0.0.1:${metricsPort()}"] }]`,
        '',
      ].join('\n');
      await writeFile(join(promDir, 'prometheus.yml'), config);
      const child = spawn(
        PROMETHEUS,
        [`--config.file=${join(promDir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let log = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
      const api = async (path: string): Promise<{ status: string; data: unknown } | undefined> => {
        if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${log}`);
        try {
          return (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as { status: string; data: unknown };
        } catch {
          return undefined; // not listening yet
        }
      };
      try {
        type Vector = { result: { metric: Record<string, string>; value: [number, string] }[] };
        let vector: Vector | undefined;
        await waitFor(
          async () => {
            const reply = await api('/api/v1/query?query=agora_tribunal_challenge_rate_ratio');
            vector = reply?.data as Vector | undefined;
            return vector?.result[0]?.value[1] === '0.4';
          },
          'Prometheus to return the scraped challenge rate',
          30_000,
        );
        expect(vector!.result).toEqual([{ metric: { __name__: 'agora_tribunal_challenge_rate_ratio', job: 'agora-projections', instance: `127.0.0.1:${metricsPort()}` }, value: [expect.any(Number), '0.4'] }]);

        type Rules = { groups: { name: string; rules: { name: string; type: string; health: string; state?: string; lastEvaluation: string }[] }[] };
        let rules: Rules | undefined;
        await waitFor(
          async () => {
            rules = (await api('/api/v1/rules'))?.data as Rules | undefined;
            const all = rules?.groups.flatMap((g) => g.rules) ?? [];
            return all.length === RULE_COUNT && all.every((r) => !r.lastEvaluation.startsWith('0001-'));
          },
          'Prometheus to evaluate the rules',
          15_000,
        );
        const evaluated = rules!.groups.flatMap((g) => g.rules.map((r) => ({ group: g.name, name: r.name, type: r.type, health: r.health, state: r.state })));
        // a healthy 0.4, no new execution despite objections, no recovery, no chamber session, no debate, no command, no audit yet: nothing fires
        expect(new Set(evaluated.map((r) => r.group))).toEqual(new Set(['agora-audit', 'agora-chamber', 'agora-debate', 'agora-dialectic', 'agora-platform', 'agora-tribunal', 'agora-voting']));
        expect(evaluated.filter((r) => r.health !== 'ok')).toEqual([]);
        const alerts = evaluated.filter((r) => r.type === 'alerting');
        expect(alerts.filter((r) => r.state !== 'inactive')).toEqual([]);
        expect(alerts.map((r) => r.name)).toEqual(expect.arrayContaining(['TribunalRubberStamping', 'TribunalChallengeRateAboveTarget', 'TribunalOverhead', 'DialecticCollusionFlagged', 'ChamberArbiterOwnProviderBias', 'DebateSteelmanGradingLax', 'AgoraProcessDown']));
      } finally {
        await stop(child);
        await rm(promDir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
