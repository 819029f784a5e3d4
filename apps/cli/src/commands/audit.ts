import { availableParallelism } from 'node:os';
import type { AuditReport, Finding } from '../audit/engine.js';
import { columns, CommandFailed, EXIT, flag, integerOption, type CommandSpec, type Io } from '../command.js';

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
                           command after one is decided again under the value the log recorded`;

/** One line per finding: `<stream>@<revision> (position <p>) <check>: <reason>`. */
export function findingLine(f: Finding): string {
  return `${f.streamId}@${f.revision} (position ${f.position}, ${f.eventType}) ${f.check}: ${f.reason}`;
}

function summary(report: AuditReport, store: string): string {
  const rate = report.elapsedMs > 0 ? Math.round((report.events * 1000) / report.elapsedMs) : report.events;
  const lines = [
    `audit of ${store}: ${report.events} events, ${report.commands} commits, ${report.streams} streams in ${(report.elapsedMs / 1000).toFixed(1)} s (${rate} events/s)`,
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
  usage: '[--json] [--workers <n>]',
  description: `Reads the store directly (not through the gateway). Progress goes to stderr about once a second.\n\nEnvironment:\n${AUDIT_ENV_HELP.replace(/^/gm, '  ')}`,
  options: {
    json: { type: 'boolean', description: 'print the report as one JSON object' },
    workers: { type: 'string', value: '<n>', description: `worker threads for signature checks (default: ${Math.max(0, Math.min(4, availableParallelism() - 1))}; 0 checks on the main thread)` },
  },
  positionals: [],
  examples: ['agora audit                  (the log EVENT_STORE names, e.g. embedded:./data/events)', 'agora audit --json --workers 1'],
  async run(args, io) {
    const workers = integerOption(args, 'workers', 'audit', { min: 0, max: 64 }) ?? Math.max(0, Math.min(4, availableParallelism() - 1));
    const json = flag(args, 'json');
    const { openAuditedStore } = await import('../audit/settings.js');
    const opened = await openAuditedStore(io.env);
    let report: AuditReport;
    try {
      const { auditLog } = await import('../audit/engine.js');
      report = await auditLog(opened.store, {
        ...opened.options,
        workers,
        onProgress: (p) => io.stderr(`audit: position ${p.position ?? '-'}, ${p.events} events, ${p.elapsedMs > 0 ? Math.round((p.events * 1000) / p.elapsedMs) : 0} events/s\n`),
      });
    } catch (error) {
      throw new CommandFailed('audit_failed', `reading ${opened.description}: ${(error as Error).message}`);
    } finally {
      await opened.store.close();
    }
    if (report.events === 0) io.stderr(`audit: ${opened.description} holds no events: is EVENT_STORE the log you mean?\n`);
    io.stdout(json ? `${JSON.stringify(report)}\n` : summary(report, opened.description));
    return report.findings.length === 0 ? EXIT.ok : EXIT.failed;
  },
};

export type { Io };
