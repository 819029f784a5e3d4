/**
 * What `agora audit --follow` serves on /metrics: where it verified the log up to, how far behind
 * the log's end it is, and its findings by check (a handful of label values, never an id).
 *
 * - agora_audit_verified_position_events        gauge: events of the log verified, counted from its start (across resumes)
 * - agora_audit_events_verified_total           counter: events verified by this process
 * - agora_audit_lag_events                      gauge: events stored after the position verified (counted up to LAG_COUNT_CAP)
 * - agora_audit_lag_seconds                     gauge: age of the oldest event not verified yet, 0 when caught up
 * - agora_audit_findings_total{check}           counter: findings by check (every check present, 0 until one)
 * - agora_audit_caught_up                       gauge: 1 once the pass over the log is done and the audit follows
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { EventStore } from '@agora/eventstore';
import { serveMetrics, type MetricsServer } from '@agora/runtime';
import { CHECKS, type AuditPosition, type Finding } from './report.js';

/** Events after the verified position are counted up to this many at each scrape (one bounded read). */
export const LAG_COUNT_CAP = 1_000;

export interface AuditMetrics {
  registry: Registry;
  finding(finding: Finding): void;
}

export function auditMetrics(store: EventStore, at: () => AuditPosition, options: { now?: () => number } = {}): AuditMetrics {
  const now = options.now ?? Date.now;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const startCount = at().count;
  new Gauge({
    name: 'agora_audit_verified_position_events',
    help: 'Events of the log the audit verified, counted from the log\'s start (its position in the log, across resumes)',
    registers,
    collect() {
      this.set(at().count);
    },
  });
  new Counter({
    name: 'agora_audit_events_verified_total',
    help: 'Events this audit process verified (signatures, chains, decisions)',
    registers,
    collect() {
      this.reset();
      this.inc(at().count - startCount);
    },
  });
  /** One bounded read after the verified position per scrape, shared by the two lag gauges. */
  let lag: Promise<{ events: number; seconds: number }> | undefined;
  const measureLag = () =>
    (lag ??= (async () => {
      const { position } = at();
      let events = 0;
      let oldest: string | undefined;
      for await (const event of store.readAll(position === undefined ? { maxCount: LAG_COUNT_CAP } : { after: position, maxCount: LAG_COUNT_CAP })) {
        oldest ??= event.recordedAt;
        events++;
      }
      return { events, seconds: oldest === undefined ? 0 : Math.max(0, (now() - Date.parse(oldest)) / 1000) };
    })().finally(() => setTimeout(() => (lag = undefined), 0)));
  new Gauge({
    name: 'agora_audit_lag_events',
    help: `Events stored after the position the audit verified (counted up to ${LAG_COUNT_CAP}): 0 when it has verified the log's end`,
    registers,
    async collect() {
      this.set((await measureLag()).events);
    },
  });
  new Gauge({
    name: 'agora_audit_lag_seconds',
    help: 'Age of the oldest event the audit has not verified yet, 0 when it has verified the log\'s end',
    registers,
    async collect() {
      this.set((await measureLag()).seconds);
    },
  });
  const findings = new Counter({ name: 'agora_audit_findings_total', help: 'Findings of the audit by check (envelope, signature, authorization, chain, decision, model_calls, checkpoint, continuation)', labelNames: ['check'], registers });
  for (const check of CHECKS) findings.inc({ check }, 0);
  new Gauge({
    name: 'agora_audit_caught_up',
    help: 'Whether the audit has verified the log as it stood when it started and now follows it (1) or is still reading it (0)',
    registers,
    collect() {
      this.set(at().following ? 1 : 0);
    },
  });
  return { registry, finding: (finding) => findings.inc({ check: finding.check }) };
}

/** The metrics, served on /metrics (and /health) at `port` on `host`, the services' way. */
export async function serveAuditMetrics(store: EventStore, at: () => AuditPosition, where: { port: number; host: string }): Promise<AuditMetrics & MetricsServer> {
  const metrics = auditMetrics(store, at);
  const server = await serveMetrics({ registry: metrics.registry, port: where.port, host: where.host });
  return { ...metrics, ...server };
}
