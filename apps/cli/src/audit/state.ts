/**
 * The state file of a resumable audit (`agora audit --state <file>`): where the audit verified the
 * log up to, what it needs to check that the log it resumes on continues that one, and what it
 * must know to go on (the agents' keys at that position), signed with the auditor's own key.
 *
 * Bounded whatever the log's length: the log's running hash (LogHasher) at the position and the
 * one before (the last event is hashed again on resume), the keyring, the protocols' counts, and
 * the last commit hash of the streams most recently written (at most `stateStreams`, none for a
 * one-commit stream such as a command id reservation). A stream's decider state is not kept: a
 * stream that continues is read again from the log up to the position and its last commit hashed
 * (engine.ts, restoreStream; resume.ts). The settings the log recorded up to the position (settings-<name>)
 * ride along: each command after it is decided again under them.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { SIGNING_TAGS } from '@agora/contracts';
import type { LogHead, SettingsInForce } from '@agora/eventsourcing';
import { domainSigningBytes, signBytes, verifyBytes, type KeyPair } from '@agora/identity';
import type { ProtocolSummary } from './report.js';

export const AUDIT_STATE_FORMAT = 'agora.audit-state';
export const AUDIT_STATE_VERSION = 1;

/** An agent's keys and roles at the state's position. */
export interface AgentKeys {
  /** Current key and the keys it replaced, newest last. */
  publicKey: string;
  retired: string[];
  roles: readonly string[];
  status: string;
}

export interface AuditState {
  format: typeof AUDIT_STATE_FORMAT;
  version: typeof AUDIT_STATE_VERSION;
  /** The log audited, as EVENT_STORE described it (for people: the check is the hashes). */
  store: string;
  savedAt: string;
  /** The log's head after the last event verified: count, running hash, position. */
  log: LogHead;
  /** The head before that event, from which it is hashed again on resume. */
  previous: { hash: string; position: string | undefined };
  events: number;
  commands: number;
  checkpointsVerified: number;
  /** Findings made up to the position (each printed by the run that made it). */
  findings: number;
  protocols: Record<string, ProtocolSummary>;
  /** Registered agents' keys and roles at the position. */
  keyring: [agentId: string, keys: AgentKeys][];
  /** The settings in force at the position (the log's last SettingsRecorded of each name). */
  settings: SettingsInForce;
  /** Streams' last verified revision and commit hash, the least recently written first. */
  streams: [streamId: string, revision: number, commitHash: string][];
  /** The auditor's public key, which `signature` verifies under. */
  signedBy: string;
}

/** What the audit knows at a commit's end (LogAuditor.snapshot), saved with the store's name, the time and the auditor's signature. */
export type AuditSnapshot = Omit<AuditState, 'format' | 'version' | 'store' | 'savedAt' | 'signedBy'>;

/** Why a state file cannot be used: the command says it and stops (a state is never silently ignored). */
export class AuditStateRefused extends Error {}

/** The signed bytes: the state as JSON would carry it (no undefined members), without its signature. */
function stateBytes(state: AuditState): Buffer {
  return domainSigningBytes(SIGNING_TAGS.auditState, JSON.parse(JSON.stringify(state)));
}

/** Writes the state signed by `key`, whole or not at all (a temporary file renamed over the old one). */
export function writeAuditState(path: string, body: Omit<AuditState, 'format' | 'version' | 'signedBy' | 'savedAt'>, key: KeyPair, now: Date = new Date()): AuditState {
  const state: AuditState = { format: AUDIT_STATE_FORMAT, version: AUDIT_STATE_VERSION, ...body, savedAt: now.toISOString(), signedBy: key.publicKey };
  const signature = signBytes(stateBytes(state), key.secretKey);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ ...state, signature })}\n`, { mode: 0o600 });
  renameSync(temporary, path);
  return state;
}

/**
 * The state at `path`, its signature checked under `publicKey` (the auditor's); undefined when there
 * is no file yet (a first run). Anything else wrong with it is refused.
 */
export function readAuditState(path: string, publicKey: string): AuditState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AuditStateRefused(`cannot read the audit state ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let parsed: (AuditState & { signature?: unknown }) | undefined;
  try {
    parsed = JSON.parse(text) as AuditState & { signature?: unknown };
  } catch {
    throw new AuditStateRefused(`${path} is not an audit state (not JSON)`);
  }
  const { signature, ...state } = parsed ?? ({} as AuditState & { signature?: unknown });
  if (state.format !== AUDIT_STATE_FORMAT || state.version !== AUDIT_STATE_VERSION) throw new AuditStateRefused(`${path} is not an audit state of version ${AUDIT_STATE_VERSION} (format ${JSON.stringify(state.format)}, version ${JSON.stringify(state.version)})`);
  if (state.signedBy !== publicKey) throw new AuditStateRefused(`${path} is signed by ${String(state.signedBy)}, not by the auditor's key ${publicKey}: it is not this auditor's state`);
  if (typeof signature !== 'string' || !verifyBytes(stateBytes(state as AuditState), signature, publicKey)) throw new AuditStateRefused(`the signature of ${path} does not verify under the auditor's key: the state was changed after it was written`);
  return state as AuditState;
}
