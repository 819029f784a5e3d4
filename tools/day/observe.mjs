// What watches a `npm run day` run: `agora audit --follow` from the start (its /metrics give the
// audit's lag), and Debian's Prometheus scraping every Agora process and the audit every 2 s with the
// project's rules and alerts (deploy/prometheus/agora-rules.yml) loaded; at the end, the series the
// report plots, read back from Prometheus.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout } from 'node:timers';
import { auditEnvironment, ensureKeyFile, ROOT } from '../cluster/cluster-lib.mjs';
import { aptInstall } from '../test/setup.mjs';

export const PROMETHEUS = process.env['PROMETHEUS_BIN'] ?? '/usr/bin/prometheus';
export const SCRAPE_SECONDS = 2;

/** Why Prometheus cannot run here, or undefined: Debian's prometheus is installed when missing (as the tests' set-up does, as root). */
export function cannotRunPrometheus(log) {
  if (existsSync(PROMETHEUS)) return undefined;
  if (process.env['PROMETHEUS_BIN'] === undefined) {
    try {
      aptInstall(['prometheus'], log);
    } catch (error) {
      return error.message;
    }
  }
  return existsSync(PROMETHEUS) ? undefined : `${PROMETHEUS} not found: install Debian's prometheus (apt-get install prometheus), or set PROMETHEUS_BIN`;
}

/**
 * Starts `agora audit --follow` on the cluster's log in `group` (as `audit`), its state signed with
 * the auditor's key, /metrics on `metricsPort`; supervised as a service manager would: when it stops
 * unasked it is started again, resuming from its state, and the stop is recorded (when, and the last
 * line it printed). Returns { stops, findings() (the lines of its findings), stop() }.
 */
export async function startAuditFollow(group, shared, metricsPort) {
  const { keyFile } = ensureKeyFile(join(shared.dir, 'auditor.key.json'), 'auditor');
  const args = [join(ROOT, 'apps/cli/dist/main.js'), 'audit', '--follow', '--state', join(shared.dir, 'audit-state.json'), '--key', keyFile];
  await group.start('audit', process.execPath, args, { ...auditEnvironment(shared), METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' }, /following the log$/m);
  const stops = [];
  const log = () => (existsSync(group.logOf('audit')) ? readFileSync(group.logOf('audit'), 'utf8') : '');
  let running = true;
  const watching = (async () => {
    while (running) {
      await group.entries.get('audit').exited;
      if (!running || group.stopping) return;
      stops.push({ at: Date.now(), why: log().trimEnd().split('\n').at(-1) ?? '' });
      await group.restart('audit').catch(() => new Promise((r) => setTimeout(r, 2000)));
    }
  })();
  return {
    stops,
    findings: () => log().split('\n').filter((line) => line.startsWith('finding:')),
    async stop() {
      running = false;
      group.entries.get('audit')?.child.kill('SIGTERM');
      await Promise.race([watching, new Promise((r) => setTimeout(r, 10_000))]);
    },
  };
}

/** Starts Prometheus in `group` (as `prometheus`), scraping `targets` ({ process name: port }); resolves to its URL once it has scraped each. */
export async function startPrometheus(group, dir, targets, port) {
  const store = join(dir, 'prometheus');
  mkdirSync(store, { recursive: true });
  const config = [
    `global: { scrape_interval: ${SCRAPE_SECONDS}s, scrape_timeout: ${SCRAPE_SECONDS}s, evaluation_interval: ${SCRAPE_SECONDS}s }`,
    `rule_files: [${JSON.stringify(join(ROOT, 'deploy/prometheus/agora-rules.yml'))}]`,
    'scrape_configs:',
    '  - job_name: agora',
    '    static_configs:',
    ...Object.entries(targets).map(([name, p]) => `      - { targets: ["127.0.0.1:${p}"], labels: { process: ${JSON.stringify(name)} } }`),
    '',
  ].join('\n');
  writeFileSync(join(store, 'prometheus.yml'), config);
  await group.start('prometheus', PROMETHEUS, [`--config.file=${join(store, 'prometheus.yml')}`, `--storage.tsdb.path=${join(store, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], {}, /Server is ready to receive web requests/);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await instant(url, 'up == 1').catch(() => []);
    if (up.length === Object.keys(targets).length) return url;
    if (Date.now() > deadline) throw new Error(`Prometheus scraped ${up.length} of ${Object.keys(targets).length} processes after 60 s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function api(url, path, params) {
  const res = await globalThis.fetch(`${url}/api/v1/${path}?${new globalThis.URLSearchParams(params)}`);
  const body = await res.json();
  if (body.status !== 'success') throw new Error(`Prometheus ${path} ${params.query}: ${body.error ?? res.status}`);
  return body.data.result;
}

/** An instant query's result. */
export function instant(url, query) {
  return api(url, 'query', { query });
}

/** A range query from t0 to t1 (ms) every `step` s: [{ metric, points: [[ms, value]] }]. */
export async function range(url, query, t0, t1, step) {
  const result = await api(url, 'query_range', { query, start: String(t0 / 1000), end: String(t1 / 1000), step: String(step) });
  return result.map((r) => ({ metric: r.metric, points: r.values.map(([t, v]) => [t * 1000, Number(v)]) }));
}

/** Every series the report plots and the assertions read, from Prometheus, from t0 to t1. */
export async function collectSeries(url, t0, t1) {
  const step = Math.max(SCRAPE_SECONDS, Math.round((t1 - t0) / 1000 / 720));
  const by = (label) => (series) => series.map((s) => ({ name: s.metric[label] ?? '', points: s.points }));
  const [rss, loop, commands, refused, auditLag, alerts] = await Promise.all([
    range(url, 'process_resident_memory_bytes / 1048576', t0, t1, step).then(by('process')),
    range(url, 'nodejs_eventloop_lag_p99_seconds * 1000', t0, t1, step).then(by('process')),
    range(url, 'sum(rate(agora_commands_handled_total[20s]))', t0, t1, step).then((s) => s.map((x) => ({ name: 'answered', points: x.points }))),
    range(url, 'sum by (code) (rate(agora_commands_handled_total{outcome!="accepted"}[20s]))', t0, t1, step).then(by('code')),
    range(url, 'max(agora_audit_lag_seconds)', t0, t1, SCRAPE_SECONDS).then((s) => s.map((x) => ({ name: 'audit lag', points: x.points }))),
    range(url, 'ALERTS', t0, t1, SCRAPE_SECONDS),
  ]);
  // Each alert's rule group (agora-platform, agora-tribunal, ...), from the rules Prometheus loaded.
  const rules = await globalThis.fetch(`${url}/api/v1/rules?type=alert`).then((r) => r.json());
  const groupOf = new Map(rules.data.groups.flatMap((g) => g.rules.map((r) => [r.name, g.name])));
  // Each alert's spans: pending and firing, from the first sample to the last of each run of samples.
  const spans = [];
  for (const s of alerts) {
    let span;
    for (const [t] of s.points) {
      if (span && t - span.to <= SCRAPE_SECONDS * 1000 * 2) span.to = t;
      else spans.push((span = { alert: s.metric.alertname, group: groupOf.get(s.metric.alertname), state: s.metric.alertstate, labels: s.metric, from: t, to: t }));
    }
  }
  return { step, rss, loop, commands, refused, auditLag, alerts: spans };
}
