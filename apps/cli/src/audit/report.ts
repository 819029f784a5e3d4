/**
 * What `agora audit` reports: the checks, a finding, the report of a pass, where the audit is
 * (engine.ts makes them; the options it runs with are in options.ts).
 */
import type { ModelCallLedger } from './model-calls.js';

export type Check = 'envelope' | 'signature' | 'authorization' | 'chain' | 'decision' | 'checkpoint' | 'model_calls' | 'continuation';
export const CHECKS: readonly Check[] = ['chain', 'envelope', 'signature', 'authorization', 'decision', 'model_calls', 'checkpoint', 'continuation'];

export interface Finding {
  check: Check;
  streamId: string;
  revision: number;
  position: string;
  eventType: string;
  reason: string;
}

export interface ProtocolSummary {
  events: number;
  commands: number;
  findings: number;
}

export interface AuditReport {
  events: number;
  commands: number;
  streams: number;
  /** Checkpoints found in the log, and how many of them the log was hashed up to. */
  checkpoints: { recorded: number; verified: number; lastCount: number | undefined };
  protocols: Record<string, ProtocolSummary>;
  /** Every model call of the log, by who made it and the budget it was reserved against. */
  modelCalls: ModelCallLedger[];
  findings: Finding[];
  elapsedMs: number;
  /** Where a resumed audit started: the state file's position and what it had verified up to it. */
  resumed?: { position: string | undefined; events: number; findings: number };
}

export interface AuditProgress {
  events: number;
  position: string | undefined;
  elapsedMs: number;
}

/** The last event checked: what the metrics show of where the audit is. */
export interface AuditPosition {
  /** Events of the log hashed up to it (from the log's start, across resumes). */
  count: number;
  /** The pass over the log is done and the audit follows it. */
  following: boolean;
  position: string | undefined;
  recordedAt: string | undefined;
}

/**
 * Findings at one position in the order the checks of a commit run. Signatures and chain links
 * are answered later when worker threads check them: sorting by this keeps the report the same
 * whatever the number of workers.
 */
const CHECK_ORDER = Object.fromEntries(CHECKS.map((check, i) => [check, i])) as Record<Check, number>;

/** Findings in log order, and at one position in the order the checks run. */
export function sortFindings(findings: Finding[]): void {
  findings.sort((a, b) => (a.position === b.position ? CHECK_ORDER[a.check] - CHECK_ORDER[b.check] : comparePositions(a.position, b.position)));
}

/** Positions are opaque, but every adapter's are ordered: numbers, `seq:index`, or `commit/prepare` pairs. */
function comparePositions(a: string, b: string): number {
  const pa = a.split(/[:/]/).map((p) => BigInt(p.replace(/\D/g, '') || '0'));
  const pb = b.split(/[:/]/).map((p) => BigInt(p.replace(/\D/g, '') || '0'));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0n;
    const y = pb[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
