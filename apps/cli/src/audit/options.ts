/**
 * What `agora audit` runs with (engine.ts runs it): the keys and policies it trusts from the
 * configuration, where it resumes, how it follows the log, and whom it tells what it finds.
 */
import type { SettingsInForce } from '@agora/eventsourcing';
import type { ServiceKeyring } from '@agora/identity';
import type { AuditPosition, AuditProgress, Finding } from './report.js';
import type { AuditPolicies } from './rules.js';
import type { StageTimes } from './stages.js';
import type { AuditSnapshot, AuditState } from './state.js';

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
  follow?: { idleMs?: number; onSettled?: (audit: SettledAudit) => void };
  /** Ends the pass (at a commit's end) or the following. */
  signal?: AbortSignal;
  /**
   * How long a read of the log mid-commit (a stream's history) is tried again while the store is
   * unavailable (a partition, a node restarting) before the audit fails on it. Default 120,000.
   */
  unavailableWaitMs?: number;
  /** How many streams' last commit hashes a state keeps, the most recently written first. Default 100,000. */
  stateStreams?: number;
  /** Where to add up the time each stage takes (stages.ts), for a benchmark; none is kept without it. */
  stages?: StageTimes;
}

/** The audit as following tells of it each time every commit read is checked: where it is, and its state to save. */
export interface SettledAudit {
  readonly at: AuditPosition;
  /** A step failed (a read of the store mid-commit): no snapshot can be taken. */
  readonly failed: boolean;
  snapshot(): AuditSnapshot;
}
