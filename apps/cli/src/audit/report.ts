/**
 * What `agora audit` reports: the checks, a finding, the report of a pass, where the audit is, and
 * the options it runs with (engine.ts runs it).
 */
import type { SettingsInForce } from '@agora/eventsourcing';
import type { ServiceKeyring } from '@agora/identity';
import type { ModelCallLedger } from './model-calls.js';
import type { AuditPolicies } from './rules.js';
import type { AuditState } from './state.js';
import type { LogAuditor } from './engine.js';

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

/** An agent the log does not register but the deployment trusts from its configuration (the bootstrap operator). */
export interface TrustedKey {
  agentId: string;
  publicKey: string;
  roles: readonly string[];
}

export interface AuditOptions {
  /** The policies of a log that records no settings (before its first SettingsRecorded of each): see rules.ts. */
  policies?: AuditPolicies;
  /** The settings in force where this audit resumes (`settingsInForce` of the audit that stopped there). */
  settings?: SettingsInForce;
  /** Agents known from configuration (AGORA_OPERATOR_KEY_FILE / AGORA_OPERATOR_PUBLIC_KEY). */
  trusted?: readonly TrustedKey[];
  /** The services' public keys over time (AGORA_SERVICE_PUBLIC_KEYS): what `service:<name>` signed with. */
  serviceKeys?: ServiceKeyring;
  /** Called about once a second while the log is read. */
  onProgress?: (progress: AuditProgress) => void;
  progressEveryMs?: number;
  /** Signature checks run on this many worker threads (0: on this thread). Default: 0. */
  workers?: number;
  /** Called with each finding as it is made (the report lists them all, in log order, at the end). */
  onFinding?: (finding: Finding) => void;
  /** Continue after the position this state (read and verified by state.ts) records. */
  resume?: AuditState;
  /**
   * Stay attached after the pass, checking each new commit, until `signal` aborts (the pass also
   * stops there, at a commit's end). `onSettled` is told each time every commit read so far is checked.
   */
  follow?: { idleMs?: number; onSettled?: (auditor: LogAuditor) => void };
  /** Ends the pass (at a commit's end) or the following. */
  signal?: AbortSignal;
  /** How many streams' last commit hashes a state keeps, the most recently written first. Default 100,000. */
  stateStreams?: number;
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
