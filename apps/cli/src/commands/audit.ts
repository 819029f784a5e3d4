import { availableParallelism } from 'node:os';
import type { KeyPair } from '@agora/identity';
import type { AuditOptions, AuditReport, Finding, SettledAudit } from '../audit/engine.js';
import type { AuditState } from '../audit/state.js';
import { columns, CommandFailed, EXIT, flag, integerOption, stringOption, UsageError, type CommandSpec, type Io } from '../command.js';
import { readKeyFile } from '../gateway-client.js';

/** With --follow, the state file is written at most this often (and when the audit stops). */
const STATE_EVERY_MS = 1_000;
/** METRICS_PORT of `agora audit --follow` by default (DEFAULT_METRICS_PORTS.audit of @agora/runtime). */
const AUDIT_METRICS_PORT = 9473;

export const AUDIT_ENV_HELP = `EVENT_STORE                the log to audit: embedded, embedded:<dir>, jetstream[://host:port][?stream=..&prefix=..],
                           kurrentdb://... (as the services take it; default embedded under AGORA_DATA_DIR)
AGORA_DATA_DIR             data directory of the embedded store (default ./data)
NATS_URL, NATS_USER, NATS_PASSWORD
                           the jetstream store's server and user (deploy/nats: the auditor user reads the
                           log and writes nothing)
AGORA_OPERATOR_KEY_FILE, AGORA_OPERATOR_PUBLIC_KEY, AGORA_OPERATOR_ID
                           the bootstrap operator, whose signature the first commands carry (default:
                           <AGORA_DATA_DIR>/operator.key.json when there, the one npm start made)
AGORA_SERVICE_PUBLIC_KEYS  the services' public keys over time (what service:<name> signed with); unset:
                           the key files under AGORA_SERVICE_KEYS_DIR (default <AGORA_DATA_DIR>/service-keys)
AGORA_TRIBUNAL_POLICY, AGORA_DIALECTIC_POLICY, AGORA_BREAKER_RISK_THRESHOLD, AGORA_CHAMBER_*
                           only for a log written before the services recorded their settings in it
                           (settings-<name>): each holds until the log's first record of it; every
                           command after one is decided again under the value the log recorded
AGORA_AUDIT_KEY_FILE       the auditor's key file (agora keys new), which signs and checks --state
METRICS_PORT, METRICS_HOST with --follow: where /metrics is served (default ${AUDIT_METRICS_PORT} on 0.0.0.0; 0 = any free port)`;

/** One line per finding: `<stream>@<revision> (position <p>) <check>: <reason>`. */
export function findingLine(f: Finding): string {
  return `${f.streamId}@${f.revision} (position ${f.position}, ${f.eventType}) ${f.check}: ${f.reason}`;
}

function summary(report: AuditReport, store: string): string {
  const read = report.events - (report.resumed?.events ?? 0);
  const rate = report.elapsedMs > 0 ? Math.round((read * 1000) / report.elapsedMs) : read;
  const lines = [
    `audit of ${store}: ${report.events} events, ${report.commands} commits, ${report.streams} streams in ${(report.elapsedMs / 1000).toFixed(1)} s (${rate} events/s)`,
    ...(report.resumed ? [`resumed after position ${report.resumed.position ?? '-'} (${report.resumed.events} events verified before, ${report.resumed.findings} findings then): ${read} events read`] : []),
    `checkpoints: ${report.checkpoints.recorded} recorded, ${report.checkpoints.verified} verified${report.checkpoints.lastCount === undefined ? '' : ` (the last covers ${report.checkpoints.lastCount} events)`}`,
    '',
    columns([
      ['protocol', 'events  commits  findings'],
      ...Object.entries(report.protocols)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, p]): [string, string] => [name, `${String(p.events).padStart(6)}  ${String(p.commands).padStart(7)}  ${String(p.findings).padStart(8)}`]),
    ]),
    ...modelCallLines(report),
    '',
    report.findings.length === 0 ? 'no findings' : `${report.findings.length} finding${report.findings.length === 1 ? '' : 's'}:`,
    ...report.findings.map((f) => `  ${findingLine(f)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Every model call attributed: who made it, the budget it was reserved against, what it cost. */
function modelCallLines(report: AuditReport): string[] {
  if (report.modelCalls.length === 0) return [];
  return [
    '',
    'model calls by caller and budget:',
    columns([
      ['caller', 'budget  calls  interrupted  open  spent / amount'],
      ...report.modelCalls.map((m): [string, string] => [
        m.caller,
        `${m.budget}  ${m.calls}  ${m.interrupted}  ${m.open}  ${m.spent}${m.amount === null ? '' : ` / ${m.amount}`}${m.currency === null ? '' : ` ${m.currency}`}`,
      ]),
    ]),
  ];
}

export const audit: CommandSpec = {
  name: 'audit',
  brief: 'verify every event of the log: signatures, roles, chains, checkpoints, decisions',
  summary: 'Read the whole event log (EVENT_STORE) and verify every commit: its signed envelope, the signature under the key the signer had then, the signer\'s role then, its stream\'s chain, the log checkpoints, and the command decided again on the state before it; every model call attributed to its caller and budget (an agent\'s ledger: no outcome without a reservation, no second outcome, no spend over the budget). Exit code 1 on any finding.',
  usage: '[--json] [--workers <n>] [--follow [--exit-on-finding]] [--state <file> [--key <file>]]',
  description: `Reads the store directly (not through the gateway). Progress goes to stderr about once a second.

With --follow the audit stays attached after its pass over the log: each new commit is verified as it is stored (within a second), each finding printed on stdout as it is made, until Ctrl-C or SIGTERM (then the report). It serves /metrics (METRICS_PORT, default ${AUDIT_METRICS_PORT}): the position verified, the lag behind the log's end, findings by check.

With --state <file> the audit is resumable: it starts after the position the file records (once the log is shown to continue the one verified: a rewritten past is a "continuation" finding) and writes the file back, signed with the auditor's key (--key or AGORA_AUDIT_KEY_FILE), when it stops (and about once a second while following). No file yet: it starts at the log's beginning.

Environment:\n${AUDIT_ENV_HELP.replace(/^/gm, '  ')}`,
  options: {
    json: { type: 'boolean', description: 'print the report as one JSON object' },
    workers: { type: 'string', value: '<n>', description: `worker threads for signature checks (default: ${Math.max(0, Math.min(4, availableParallelism() - 1))}; 0 checks on the main thread)` },
    follow: { type: 'boolean', description: 'after the pass, verify each new commit as it is stored and serve /metrics, until stopped' },
    'exit-on-finding': { type: 'boolean', description: 'stop at the first finding (exit code 1)' },
    state: { type: 'string', value: '<file>', description: 'resume from this signed audit state and save it back (created when missing)' },
    key: { type: 'string', value: '<file>', description: "the auditor's key file that signs the state (default AGORA_AUDIT_KEY_FILE)" },
  },
  positionals: [],
  examples: [
    'agora audit                  (the log EVENT_STORE names, e.g. embedded:./data/events)',
    'agora audit --json --workers 1',
    'agora audit --follow --state audit-state.json --key auditor.key.json',
  ],
  async run(args, io) {
    const workers = integerOption(args, 'workers', 'audit', { min: 0, max: 64 }) ?? Math.max(0, Math.min(4, availableParallelism() - 1));
    const json = flag(args, 'json');
    const follow = flag(args, 'follow');
    const exitOnFinding = flag(args, 'exit-on-finding');
    const statePath = stringOption(args, 'state');
    const keyPath = stringOption(args, 'key') ?? io.env['AGORA_AUDIT_KEY_FILE'];
    if (statePath !== undefined && !keyPath) throw new UsageError("--state needs the auditor's key to sign the state: --key <file> or AGORA_AUDIT_KEY_FILE (agora keys new writes one)", 'audit');
    const metricsPort = follow ? metricsPortOf(io.env) : undefined;
    const key = statePath === undefined ? undefined : readKeyFile(keyPath!);
    const { readAuditState, writeAuditState, AuditStateRefused } = await import('../audit/state.js');
    let resume: AuditState | undefined;
    try {
      resume = statePath === undefined ? undefined : readAuditState(statePath, key!.publicKey);
    } catch (error) {
      if (error instanceof AuditStateRefused) throw new CommandFailed('audit_state_refused', error.message);
      throw error;
    }
    const { FOLLOW_OPEN_WAIT_MS, openAuditedStore } = await import('../audit/settings.js');
    // A following audit is a service: a store it cannot reach at start (a partition) is waited for, as it is once running.
    const opened = await openAuditedStore(io.env, follow ? { waitMs: FOLLOW_OPEN_WAIT_MS, say: io.stderr, ...(io.signal ? { signal: io.signal } : {}) } : {});
    const stop = new AbortController();
    const onInterrupt = () => stop.abort();
    io.signal?.addEventListener('abort', onInterrupt, { once: true });
    const save = (auditor: SettledAudit) => {
      // After a failed step the state stays the last one taken before it, where a restart resumes.
      if (statePath !== undefined && !auditor.failed) writeAuditState(statePath, { store: opened.description, ...auditor.snapshot() }, key as KeyPair);
    };
    let report: AuditReport;
    let metrics: { close(): Promise<void> } | undefined;
    try {
      const { LogAuditor } = await import('../audit/engine.js');
      let served: { finding(finding: Finding): void } | undefined;
      let following = false;
      let lastSaved = 0;
      const options: AuditOptions = {
        ...opened.options,
        workers,
        signal: stop.signal,
        ...(resume ? { resume } : {}),
        onFinding: (finding) => {
          served?.finding(finding);
          if (follow) io.stdout(`finding: ${findingLine(finding)}\n`);
          if (exitOnFinding) stop.abort();
        },
        onProgress: (p) => io.stderr(`audit: position ${p.position ?? '-'}, ${p.events} events, ${p.elapsedMs > 0 ? Math.round((p.events * 1000) / p.elapsedMs) : 0} events/s\n`),
        ...(follow
          ? {
              follow: {
                onSettled: (auditor: SettledAudit) => {
                  if (!following) {
                    following = true;
                    io.stderr(`audit: verified ${auditor.at.count} events up to position ${auditor.at.position ?? '-'}; following the log\n`);
                  }
                  if (Date.now() - lastSaved < STATE_EVERY_MS) return;
                  lastSaved = Date.now();
                  save(auditor);
                },
              },
            }
          : {}),
      };
      const auditor = new LogAuditor(options);
      if (metricsPort !== undefined) {
        const { serveAuditMetrics } = await import('../audit/metrics.js');
        const server = await serveAuditMetrics(opened.store, () => auditor.at, metricsPort);
        served = metrics = server;
        io.stderr(`audit: following ${opened.description}; metrics: ${server.url}\n`);
      }
      report = await auditor.run(opened.store);
      save(auditor);
    } catch (error) {
      if (error instanceof CommandFailed) throw error;
      throw new CommandFailed('audit_failed', `reading ${opened.description}: ${(error as Error).message}`);
    } finally {
      io.signal?.removeEventListener('abort', onInterrupt);
      await metrics?.close();
      await opened.store.close();
    }
    if (report.events === 0 && !follow) io.stderr(`audit: ${opened.description} holds no events: is EVENT_STORE the log you mean?\n`);
    io.stdout(json ? `${JSON.stringify(report)}\n` : summary(report, opened.description));
    return report.findings.length === 0 ? EXIT.ok : EXIT.failed;
  },
};

/** METRICS_PORT and METRICS_HOST as the services read them, with the audit's own default port. */
function metricsPortOf(env: Io['env']): { port: number; host: string } {
  const text = env['METRICS_PORT'];
  const port = text === undefined || text === '' ? AUDIT_METRICS_PORT : Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`METRICS_PORT must be a port number from 0 to 65535 (got ${JSON.stringify(text)})`, 'audit');
  return { port, host: env['METRICS_HOST'] || '0.0.0.0' };
}

export type { Io };
