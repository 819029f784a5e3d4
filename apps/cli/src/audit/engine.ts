/**
 * `agora audit`: reads the whole log in its one global order and checks every commit (the events
 * one command appended) for what the trust boundary promises:
 * - envelope: the signed command is in the metadata of its first event (an event without one was
 *   not written by a service's command gate: published straight into the log);
 * - signature: it verifies under the key the signer had at that point of the log (rotations are
 *   registry events of the same log; a key rotated out before the command is named as such);
 * - authorization: the signer had, at that point, a role the command admits;
 * - chain: each stream's revisions follow one another;
 * - decision: the command, decided again on the stream's state before it with the context recorded
 *   beside it, produces exactly the events recorded;
 * - checkpoints: the hash over the log up to each recorded checkpoint is the one recorded, and the
 *   log still reaches the last checkpoint (a log edited, cut in the middle or truncated at the end).
 * Each failure is a finding with its stream, revision, position and reason.
 *
 * `follow` keeps it attached after the pass: each new commit is checked once the store has handed
 * over all of it (no event newer than its last), within about `idleMs`. A `resume` state (state.ts)
 * starts after the position it records, once the log is shown to continue the one verified then.
 */
import { AUDIT_LOG_STREAM, authorizeSender, categoryOf, commandByType, eventByType, MODEL_CALLS_CATEGORY, serviceOfActor, type CommandDefinition, type DataOf, type LogCheckpointRecorded } from '@agora/contracts';
import { checkpointMismatch, COMMAND_ID_CATEGORY, LogHasher, type LogCheckpoint, type LogHead, type RecordedDecision, type SettingsInForce } from '@agora/eventsourcing';
import { InvalidPosition, StreamNotFound, type EventStore, type RecordedEvent, type Subscription } from '@agora/eventstore';
import { COMMIT_CHAIN_FIELD, commitHash, commitsOf, envelopeOfMetadata, serviceKeyAt, type ServiceKeyring, type SignedCommand } from '@agora/identity';
import { ModelCallAttribution, type ModelCallLedger } from './model-calls.js';
import { AuditRules, type AggregateRules, type AuditPolicies } from './rules.js';
import type { AuditState, AgentKeys } from './state.js';
import { SignatureVerifier, type VerifyTask } from './verifier.js';

/** `continuation`: the log a resumed audit reads does not continue the one its state file verified. */
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

interface StreamCursor {
  state: unknown;
  revision: number;
  rules: AggregateRules | undefined;
  /** The stream's last commit, which the next one links to (per-commit hash chain). */
  lastCommit: readonly RecordedEvent[] | undefined;
}

const UNKNOWN_PROTOCOL = 'other';
/** Streams that take one commit only (command id reservations): a state keeps no chain hash for them. */
const ONE_COMMIT_CATEGORIES = new Set([COMMAND_ID_CATEGORY]);
/** Recorded checkpoints a following audit meets live cover a count it hashed a little earlier: the heads kept for them. */
const RECENT_HEADS = 65_536;
const DEFAULT_STATE_STREAMS = 100_000;
/**
 * Findings at one position in the order the checks of a commit run. Signatures and chain links
 * are answered later when worker threads check them: sorting by this keeps the report the same
 * whatever the number of workers.
 */
const CHECK_ORDER = Object.fromEntries(CHECKS.map((check, i) => [check, i])) as Record<Check, number>;

/** The signer of an envelope: its key then, the keys it had before (a signature by one of those is named), its roles then. */
interface Signer {
  publicKey: string | undefined;
  retired: readonly string[];
  roles: readonly string[];
  status: string;
  /** Why there is no key in force, when there is none. */
  missing?: string;
}

/**
 * Where `again` (decided now) and `recorded` (the log) first differ, as a path and the two values,
 * or undefined when they agree. A field `again` has at the top level and `recorded` lacks is not a
 * difference when `recorded` satisfies its event's contract without it: an optional field added by a
 * later release, which the release that wrote the event did not set (docs/event-versions.md).
 */
export function decisionDifference(type: string, again: unknown, recorded: unknown): string | undefined {
  // Compared strictly first: when nothing differs, the lenient comparison (which skips checks) finds
  // nothing either, and the event's contract need not be parsed (most events agree).
  if (differenceAt('data', again, recorded, false) === undefined) return undefined;
  const lenient = eventByType(type)?.data.safeParse(recorded).success === true;
  return differenceAt('data', again, recorded, lenient);
}

function differenceAt(path: string, again: unknown, recorded: unknown, lenientHere: boolean): string | undefined {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(again) && Array.isArray(recorded)) {
    if (again.length !== recorded.length) return `${path}: ${again.length} items decided again, ${recorded.length} in the log`;
    for (let i = 0; i < again.length; i++) {
      const d = differenceAt(`${path}[${i}]`, again[i], recorded[i], false);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(again) && isObject(recorded)) {
    // Every key of either side, `again`'s first (paths built only for a difference).
    for (const key of Object.keys(again)) {
      if (lenientHere && !(key in recorded)) continue;
      const d = differenceAt(key, again[key], recorded[key], false);
      if (d) return `${path}.${d}`;
    }
    for (const key of Object.keys(recorded)) {
      if (Object.hasOwn(again, key)) continue;
      const d = differenceAt(key, undefined, recorded[key], false);
      if (d) return `${path}.${d}`;
    }
    return undefined;
  }
  if (again === recorded) return undefined;
  return JSON.stringify(again) === JSON.stringify(recorded) ? undefined : `${path}: ${JSON.stringify(again)?.slice(0, 120)} decided again, ${JSON.stringify(recorded)?.slice(0, 120)} in the log`;
}

export class LogAuditor {
  /** The deciders under the settings in force at the position reached. */
  private readonly rules: AuditRules;
  private readonly streams = new Map<string, StreamCursor>();
  private readonly agents = new Map<string, AgentKeys>();
  private readonly trusted: Map<string, TrustedKey>;
  private readonly findings: Finding[] = [];
  private readonly protocols: Record<string, ProtocolSummary> = {};
  private readonly hasher: LogHasher;
  private readonly verifier: SignatureVerifier;
  private readonly modelCalls = new ModelCallAttribution();
  /** The recorded checkpoints by the number of events they cover, with the event that records each. */
  private checkpoints = new Map<number, { checkpoint: LogCheckpoint; recorded: RecordedEvent }>();
  private checkpointsVerified = 0;
  private events = 0;
  private commands = 0;
  private pending: RecordedEvent[] = [];
  /** The log's head before the last event hashed: a state carries it so that a resume can hash that event again. */
  private previousHead: LogHead;
  private lastRecordedAt: string | undefined;
  /** Recent heads by count, for checkpoints recorded while the audit follows. */
  private readonly recentHeads = new Map<number, LogHead>();
  /** Each stream's revision and last commit hash, the most recently written last (what a state keeps, bounded). */
  private readonly chainHeads = new Map<string, { revision: number; commit: string | readonly RecordedEvent[] }>();
  /** Streams a resumed audit found in its state: their history is read again, and checked against it, when they continue. */
  private readonly resumedStreams = new Map<string, { revision: number; commit: string }>();
  private readonly resumed: AuditState | undefined;
  private store: EventStore | undefined;
  private following = false;

  constructor(private readonly options: AuditOptions = {}) {
    if (options.follow && !options.signal) throw new TypeError('a following audit needs a signal to stop it');
    this.rules = new AuditRules(options.policies);
    const settings = options.resume?.settings ?? options.settings;
    if (settings) this.rules.resume(settings);
    this.trusted = new Map((options.trusted ?? []).map((t) => [t.agentId, t]));
    this.verifier = new SignatureVerifier(options.workers ?? 0);
    const resumed = (this.resumed = options.resume);
    this.hasher = new LogHasher(resumed?.log);
    this.previousHead = resumed ? { count: resumed.log.count - 1, ...resumed.previous } : this.hasher.current;
    if (resumed) {
      this.events = resumed.events;
      this.commands = resumed.commands;
      this.checkpointsVerified = resumed.checkpointsVerified;
      Object.assign(this.protocols, structuredClone(resumed.protocols));
      for (const [agentId, keys] of resumed.keyring) this.agents.set(agentId, keys);
      for (const [streamId, revision, commit] of resumed.streams) {
        this.resumedStreams.set(streamId, { revision, commit });
        this.chainHeads.set(streamId, { revision, commit });
      }
    }
  }

  /** Where the audit is: the last event hashed. */
  get at(): AuditPosition {
    const head = this.hasher.current;
    return { count: head.count, position: head.position, recordedAt: this.lastRecordedAt, following: this.following };
  }

  /** The settings the log recorded up to the position reached (a small foldable value: a state keeps it beside its position). */
  get settingsInForce(): SettingsInForce {
    return this.rules.inForce;
  }

  /** Audits the log of `store` (after the resumed position); with `follow`, goes on until `signal` aborts. */
  async run(store: EventStore): Promise<AuditReport> {
    const started = performance.now();
    this.store = store;
    const { signal } = this.options;
    const checkpointEvents = await store.readStream(AUDIT_LOG_STREAM).catch((error: unknown) => {
      if (error instanceof StreamNotFound) return [];
      throw error;
    });
    for (const e of checkpointEvents) this.noteCheckpoint(e);
    const everyMs = this.options.progressEveryMs ?? 1_000;
    let nextProgress = started + everyMs;
    const progress = () => this.options.onProgress?.({ events: this.events, position: this.hasher.current.position, elapsedMs: performance.now() - started });
    let continues = true;
    try {
      if (this.resumed) continues = await this.checkContinuation(store, this.resumed);
      if (continues) {
        const after = this.hasher.current.position;
        for await (const event of store.readAll(after === undefined ? {} : { after })) {
          // Stopped: at the end of a commit, so that what was checked is a whole number of commits.
          if (signal?.aborted && this.startsCommit(event)) break;
          await this.add(event);
          if (this.options.onProgress && (this.events & 255) === 0 && performance.now() >= nextProgress) {
            nextProgress = performance.now() + everyMs;
            progress();
          }
        }
        await this.settle();
        // The log as it stood reaches its last checkpoint (one recorded later, while following, is not there yet).
        if (!signal?.aborted) this.checkTruncation(this.hasher.current.position);
        if (this.options.follow && !signal?.aborted) await this.follow(store, this.options.follow);
      }
    } finally {
      await this.verifier.close();
    }
    progress();
    this.findings.sort((a, b) => (a.position === b.position ? CHECK_ORDER[a.check] - CHECK_ORDER[b.check] : comparePositions(a.position, b.position)));
    return {
      events: this.events,
      commands: this.commands,
      streams: this.streams.size,
      checkpoints: { recorded: this.checkpoints.size, verified: this.checkpointsVerified, lastCount: Math.max(0, ...this.checkpoints.keys()) || undefined },
      protocols: this.protocols,
      modelCalls: this.modelCalls.ledgers(),
      findings: this.findings,
      elapsedMs: performance.now() - started,
      ...(this.resumed ? { resumed: { position: this.resumed.log.position, events: this.resumed.events, findings: this.resumed.findings } } : {}),
    };
  }

  /**
   * After the pass: each event the store hands over is added; once none has come for `idleMs` and
   * the store holds nothing newer (a commit is stored whole, so its events come together), the
   * commits read are checked and `onSettled` told. Until `signal` aborts.
   */
  private async follow(store: EventStore, follow: NonNullable<AuditOptions['follow']>): Promise<void> {
    const idleMs = follow.idleMs ?? 20;
    const { signal } = this.options;
    let chain: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    let failed: ((error: unknown) => void) | undefined;
    const failure = new Promise<never>((_, reject) => (failed = reject));
    failure.catch(() => undefined);
    const settleWhenIdle = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        chain = chain
          .then(async () => {
            const last = this.hasher.current.position;
            const head = await store.headPosition();
            if (head !== undefined && last !== undefined && store.comparePositions(head, last) > 0) return settleWhenIdle();
            await this.settle();
            follow.onSettled?.(this);
          })
          .catch((error: unknown) => failed?.(error));
      }, idleMs);
    };
    const after = this.hasher.current.position;
    const subscription: Subscription = store.subscribe({
      name: 'audit',
      ...(after === undefined ? {} : { after }),
      handler: async (event) => {
        const adding = chain.then(() => this.add(event));
        chain = adding.catch(() => undefined);
        await adding;
        settleWhenIdle();
      },
    });
    this.following = true;
    follow.onSettled?.(this);
    try {
      const stopped = new Promise<void>((resolve) => (signal!.aborted ? resolve() : signal!.addEventListener('abort', () => resolve(), { once: true })));
      await Promise.race([subscription.caughtUp.then(() => stopped), failure]);
    } finally {
      clearTimeout(timer);
      await subscription.stop();
      await chain;
      await this.settle();
      this.following = false;
      follow.onSettled?.(this);
    }
  }

  /** Checks every commit read so far (the last one included) and waits for its signatures. */
  private async settle(): Promise<void> {
    await this.endCommit();
    await this.verifier.drain();
  }

  /** Whether `event` begins a new commit (the one in hand, if any, is whole). */
  private startsCommit(event: RecordedEvent): boolean {
    const first = this.pending[0];
    return !first || first.streamId !== event.streamId || first.metadata['commandId'] === undefined || first.metadata['commandId'] !== event.metadata['commandId'];
  }

  private noteCheckpoint(e: RecordedEvent): void {
    const { recordedAt: _, ...checkpoint } = e.data as DataOf<typeof LogCheckpointRecorded>;
    if (this.checkpoints.has(checkpoint.count)) return;
    this.checkpoints.set(checkpoint.count, { checkpoint, recorded: e });
    // Recorded after the audit hashed past it (while following): compared with the head it had then.
    const hashed = this.hasher.current.count;
    if (checkpoint.count > hashed || (this.resumed && checkpoint.count <= this.resumed.log.count)) return;
    const head = this.recentHeads.get(checkpoint.count);
    if (!head) return;
    const mismatch = checkpointMismatch(checkpoint, head);
    if (mismatch) this.report('checkpoint', e, mismatch);
    else this.checkpointsVerified++;
  }

  /**
   * A resumed audit first hashes again the last event its state verified, where the log has it now:
   * the same event at the same place, or the past was rewritten (a finding, and nothing more is read).
   */
  private async checkContinuation(store: EventStore, state: AuditState): Promise<boolean> {
    if (state.log.position === undefined) return true;
    const rewritten = (reason: string) => {
      this.report('continuation', { streamId: '$all', revision: state.log.count - 1, position: state.log.position!, type: '-' }, `${reason}: the log is not the one the audit state verified up to position ${state.log.position} (${state.log.count} events, hash ${state.log.hash})`);
      return false;
    };
    let event: RecordedEvent | undefined;
    try {
      for await (const e of store.readAll(state.previous.position === undefined ? { maxCount: 1 } : { after: state.previous.position, maxCount: 1 })) event = e;
    } catch (error) {
      if (error instanceof InvalidPosition) return rewritten(`the log has no position ${state.previous.position ?? ''}`);
      throw error;
    }
    if (!event) return rewritten('the log ends before the last event verified');
    if (event.position !== state.log.position) return rewritten(`the event after position ${state.previous.position ?? '(start)'} is at ${event.position}, not ${state.log.position}`);
    const again = new LogHasher({ count: state.log.count - 1, hash: state.previous.hash, position: state.previous.position }).add(event);
    if (again.hash !== state.log.hash) return rewritten(`the event at position ${event.position} (${event.streamId}@${event.revision}) is not the one verified`);
    return true;
  }

  private async add(event: RecordedEvent): Promise<void> {
    this.events++;
    this.previousHead = this.hasher.current;
    const head = this.hasher.add(event);
    this.lastRecordedAt = event.recordedAt;
    if (this.options.follow) {
      this.recentHeads.set(head.count, head);
      this.recentHeads.delete(head.count - RECENT_HEADS);
    }
    const mark = this.checkpoints.get(head.count);
    if (mark) {
      const mismatch = checkpointMismatch(mark.checkpoint, head);
      if (mismatch) this.report('checkpoint', mark.recorded, mismatch);
      else this.checkpointsVerified++;
    }
    if (!this.startsCommit(event)) {
      this.pending.push(event);
      return;
    }
    await this.endCommit();
    this.pending.push(event);
  }

  /**
   * What a state file keeps at this point (between commits, every check answered): the log's head,
   * the head before it, the keyring, and the last commit hash of the streams most recently written.
   */
  snapshot(): Omit<AuditState, 'format' | 'version' | 'store' | 'savedAt' | 'signedBy'> {
    if (this.pending.length > 0) throw new Error('an audit state is taken between commits');
    return {
      log: this.hasher.current,
      previous: { hash: this.previousHead.hash, position: this.previousHead.position },
      events: this.events,
      commands: this.commands,
      checkpointsVerified: this.checkpointsVerified,
      findings: (this.resumed?.findings ?? 0) + this.findings.length,
      protocols: structuredClone(this.protocols),
      keyring: [...this.agents],
      settings: this.rules.inForce,
      streams: [...this.chainHeads].map(([streamId, head]) => {
        if (typeof head.commit !== 'string') head.commit = commitHash(head.commit);
        return [streamId, head.revision, head.commit];
      }),
    };
  }

  private checkTruncation(lastPosition: string | undefined): void {
    const last = Math.max(0, ...this.checkpoints.keys());
    if (last > this.events) {
      const { checkpoint, recorded } = this.checkpoints.get(last)!;
      this.report('checkpoint', recorded, `the log ends after ${this.events} events (position ${lastPosition ?? 'none'}), yet this checkpoint covers ${last} events up to position ${checkpoint.position}: the log was truncated`);
    }
  }

  private protocolOf(streamId: string): ProtocolSummary {
    const name = this.rules.get(categoryOf(streamId))?.protocol ?? UNKNOWN_PROTOCOL;
    return (this.protocols[name] ??= { events: 0, commands: 0, findings: 0 });
  }

  private report(check: Check, event: Pick<RecordedEvent, 'streamId' | 'revision' | 'position' | 'type'>, reason: string): void {
    const finding: Finding = { check, streamId: event.streamId, revision: event.revision, position: event.position, eventType: event.type, reason };
    this.findings.push(finding);
    this.protocolOf(event.streamId).findings++;
    this.options.onFinding?.(finding);
  }

  /** The events of one commit are all in: check it, then fold it. */
  private async endCommit(): Promise<void> {
    const commit = this.pending;
    if (commit.length === 0) return;
    this.pending = [];
    const first = commit[0]!;
    const protocol = this.protocolOf(first.streamId);
    protocol.events += commit.length;
    protocol.commands++;
    this.commands++;

    // The stream's rules under the settings in force at this commit (a setting recorded since may have changed them).
    const rules = this.rules.get(categoryOf(first.streamId));
    let cursor = this.streams.get(first.streamId);
    if (!cursor) {
      cursor = { state: rules?.decider.initialState(), revision: -1, rules, lastCommit: undefined };
      this.streams.set(first.streamId, cursor);
      if (this.resumed && (first.revision > 0 || this.resumedStreams.has(first.streamId))) await this.restoreStream(cursor, first);
    } else cursor.rules = rules;
    await this.checkChain(cursor, commit);
    const accepted = await this.checkEnvelope(commit);
    if (accepted) this.checkDecision(cursor, commit, accepted.definition);
    this.fold(cursor, commit);
  }

  /**
   * Revisions follow one another, and the commit links to the stream's previous commit
   * (prevCommitHash; the previous commit is hashed where signatures are checked, on a worker thread
   * when there are workers).
   */
  private async checkChain(cursor: StreamCursor, commit: readonly RecordedEvent[]): Promise<void> {
    let expected = cursor.revision + 1;
    for (const event of commit) {
      if (event.revision !== expected) this.report('chain', event, `revision ${event.revision} follows revision ${expected - 1} of the stream: events are missing before it`);
      expected = event.revision + 1;
    }
    const first = commit[0]!;
    const link = first.metadata[COMMIT_CHAIN_FIELD];
    if (typeof link !== 'string') {
      // An event without an envelope is reported as such; a chain link is part of what a command gate writes.
      if (typeof first.metadata['signature'] === 'string') this.report('chain', first, 'the commit carries no prevCommitHash');
      return;
    }
    if (commit.some((e) => e.metadata[COMMIT_CHAIN_FIELD] !== link)) {
      this.report('chain', first, 'the events of this commit carry different prevCommitHash values');
      return;
    }
    const last = cursor.lastCommit;
    // Only what the chain hashes of each event goes to the check (no position or revision to copy to a worker).
    const previous = last?.map((e) => ({ id: e.id, type: e.type, ...(e.written ?? { data: e.data, metadata: e.metadata }) }));
    await this.verifier.submitLink({ streamId: first.streamId, link, previous }, (linked) => {
      if (linked) return;
      this.report(
        'chain',
        first,
        last === undefined
          ? 'the first commit of the stream does not carry the genesis value: a commit before it was removed'
          : `prevCommitHash does not match the stream's previous commit (revision ${last[0]!.revision}): that commit was edited, or one between them removed`,
      );
    });
  }

  /** Envelope, signature and authorization; the command's definition when all hold. */
  private async checkEnvelope(commit: readonly RecordedEvent[]): Promise<{ definition: CommandDefinition } | undefined> {
    const first = commit[0]!;
    const found = envelopeOfMetadata(first.metadata);
    if ('reason' in found) {
      this.report('envelope', first, `${found.reason}: not written through a command gate or a service's signed command (published straight into the log?)`);
      return undefined;
    }
    const { envelope } = found;
    for (const other of commit.slice(1)) {
      if (other.metadata['commandId'] !== envelope.commandId || other.metadata['actor'] !== envelope.actor) this.report('envelope', other, `the event does not carry the commit's command ${envelope.commandId}`);
    }
    const definition = commandByType(envelope.type);
    if (!definition) {
      this.report('envelope', first, `command type ${envelope.type} is not in the contracts`);
      return undefined;
    }
    const signer = this.signerOf(envelope);
    if (signer.publicKey === undefined) {
      this.report('signature', first, signer.missing ?? `${envelope.actor} has no key at this point of the log`);
      return undefined;
    }
    await this.checkSignature(first, envelope, signer);
    if (signer.status === 'disabled') {
      this.report('authorization', first, `${envelope.actor} was disabled at this point of the log`);
      return undefined;
    }
    // Under the rules the command was decided under (a log written before rules were numbered: 1).
    const decided = first.metadata['decision'] as { rules?: unknown } | undefined;
    const rules = typeof decided?.rules === 'number' ? decided.rules : 1;
    const authorization = authorizeSender(definition, { actor: envelope.actor, roles: signer.roles, rules });
    if (!authorization.allowed) {
      this.report('authorization', first, `${authorization.reason} (at this point of the log)`);
      return undefined;
    }
    return { definition };
  }

  private async checkSignature(first: RecordedEvent, envelope: SignedCommand, signer: Signer): Promise<void> {
    // A command sent without a correlation id is recorded with its commandId as one: either form
    // may be the signed one, the form without it far more often (checked first).
    const { signature, ...unsigned } = envelope;
    const { correlationId: _implied, ...withoutCorrelation } = unsigned;
    const implied = envelope.correlationId === envelope.commandId;
    const task: VerifyTask = { envelope: implied ? withoutCorrelation : unsigned, publicKey: signer.publicKey!, signature };
    await this.verifier.submit(task, (valid) => {
      // The other form, on this thread: rare (a command that named its own id as its correlation id).
      if (valid || (implied && this.verifier.verifyNow({ ...task, envelope: unsigned }))) return;
      const byRetired = signer.retired.find((key) => key !== signer.publicKey && this.verifier.verifyNow({ ...task, publicKey: key }));
      this.report(
        'signature',
        first,
        byRetired
          ? `signed by a key of ${envelope.actor} that is not in force at this point of the log (rotated out or expired): ${byRetired}`
          : `the signature of ${envelope.actor} on ${envelope.type} ${envelope.commandId} does not verify under its key at this point of the log`,
      );
    });
  }

  private signerOf(envelope: SignedCommand): Signer {
    const service = serviceOfActor(envelope.actor);
    if (envelope.actor.startsWith('service:')) {
      const keyring = this.options.serviceKeys ?? {};
      const entries = service !== undefined && Object.hasOwn(keyring, service) ? keyring[service]! : [];
      const publicKey = service === undefined ? undefined : serviceKeyAt(keyring, service, envelope.issuedAt);
      const retired = entries.map((e) => e.publicKey);
      if (publicKey === undefined) {
        const { signature, ...unsigned } = envelope;
        const byRetired = retired.find((key) => this.verifier.verifyNow({ envelope: unsigned, publicKey: key, signature }));
        return {
          publicKey: undefined,
          retired,
          roles: [],
          status: 'active',
          missing: byRetired
            ? `signed by a key of ${envelope.actor} that is not in force at ${envelope.issuedAt} (rotated out or expired): ${byRetired}`
            : entries.length === 0
              ? `${envelope.actor} is not a service whose keys the audit knows (AGORA_SERVICE_PUBLIC_KEYS)`
              : `${envelope.actor} has no key in force at ${envelope.issuedAt}`,
        };
      }
      return { publicKey, retired, roles: [], status: 'active' };
    }
    const registered = this.agents.get(envelope.actor);
    if (registered) return registered;
    const trusted = this.trusted.get(envelope.actor);
    if (trusted) return { publicKey: trusted.publicKey, retired: [], roles: trusted.roles, status: 'active' };
    return { publicKey: undefined, retired: [], roles: [], status: 'unknown', missing: `signed by ${envelope.actor}, who is not registered at this point of the log` };
  }

  private checkDecision(cursor: StreamCursor, commit: readonly RecordedEvent[], definition: CommandDefinition): void {
    const first = commit[0]!;
    // A command id reservation (commandid-<id>) records no decision: it carries the command's own
    // signed metadata (checked like every commit's) and reserves the id before the command's events.
    if (categoryOf(first.streamId) === COMMAND_ID_CATEGORY) return;
    if (!cursor.rules) {
      this.report('decision', first, `no decider for the stream category ${categoryOf(first.streamId)}`);
      return;
    }
    const meta = first.metadata;
    const decision = meta['decision'] as RecordedDecision | undefined;
    if (!decision || typeof decision.now !== 'string' || !Array.isArray(decision.actorRoles)) {
      this.report('decision', first, 'no recorded decision context (service clock, actor roles) to decide the command again');
      return;
    }
    let payload = decision.payload;
    if (payload === undefined) {
      const parsed = definition.payload.safeParse(meta['commandPayload']);
      if (!parsed.success) {
        this.report('decision', first, `the signed payload does not satisfy ${definition.type}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        return;
      }
      payload = parsed.data;
    }
    const command = { type: definition.type, payload, context: { now: decision.now, actor: String(meta['actor']), actorRoles: decision.actorRoles, commandId: String(meta['commandId']), rules: typeof decision.rules === 'number' ? decision.rules : 1 } };
    let produced: { type: string; data: unknown }[];
    try {
      produced = cursor.rules.decider.decide(command, cursor.state);
    } catch (error) {
      this.report('decision', first, `decided again on the state before it, ${definition.type} is refused: ${(error as Error).message}`);
      return;
    }
    if (produced.length !== commit.length) {
      this.report('decision', first, `decided again, ${definition.type} produces ${produced.length} events (${produced.map((e) => e.type).join(', ') || 'none'}); the log has ${commit.length} (${commit.map((e) => e.type).join(', ')})`);
      return;
    }
    for (let i = 0; i < commit.length; i++) {
      const recorded = commit[i]!;
      const again = produced[i]!;
      if (recorded.type !== again.type) {
        this.report('decision', recorded, `decided again, ${definition.type} produces ${again.type}; the log has ${recorded.type}`);
        return;
      }
      const difference = decisionDifference(recorded.type, again.data, recorded.data);
      if (difference !== undefined) {
        this.report('decision', recorded, `decided again, ${definition.type} produces another ${again.type}: ${difference}`);
        return;
      }
    }
  }

  /** Folds the recorded events (what the services folded), and keeps the agents' keys and roles. */
  private fold(cursor: StreamCursor, commit: readonly RecordedEvent[]): void {
    for (const event of commit) {
      if (cursor.rules) {
        const before = cursor.state;
        try {
          cursor.state = cursor.rules.decider.evolve(cursor.state, { type: event.type, data: event.data });
        } catch (error) {
          this.report('decision', event, `the stream's rules cannot fold this event: ${(error as Error).message}`);
        }
        if (categoryOf(event.streamId) === MODEL_CALLS_CATEGORY) for (const reason of this.modelCalls.ledgerEvent(event, before, cursor.state)) this.report('model_calls', event, reason);
      }
      this.modelCalls.chamberEvent(event);
      this.recordSettings(event);
      cursor.revision = event.revision;
      cursor.lastCommit = commit;
      if (event.streamId.startsWith('agent-')) this.trackAgent(event, cursor.state);
      if (event.streamId === AUDIT_LOG_STREAM && event.type === 'LogCheckpointRecorded') this.noteCheckpoint(event);
    }
    this.keepChainHead(commit);
  }

  /** The stream's last commit, hashed only when a state is taken (most never are: the next commit's link covers them). */
  private keepChainHead(commit: readonly RecordedEvent[]): void {
    const { streamId } = commit[0]!;
    if (ONE_COMMIT_CATEGORIES.has(categoryOf(streamId))) return;
    this.chainHeads.delete(streamId);
    this.chainHeads.set(streamId, { revision: commit.at(-1)!.revision, commit });
    if (this.chainHeads.size > (this.options.stateStreams ?? DEFAULT_STATE_STREAMS)) this.chainHeads.delete(this.chainHeads.keys().next().value!);
  }

  /**
   * A stream a resumed audit meets again: its history up to the state's position is read and folded
   * (it was checked then), and its last commit must hash to what the state recorded (when it kept the
   * stream) and lie at or before that position: otherwise its past was rewritten.
   */
  private async restoreStream(cursor: StreamCursor, first: RecordedEvent): Promise<void> {
    const store = this.store!;
    const history = first.revision > 0 ? await store.readStream(first.streamId, { maxCount: first.revision }).catch((error: unknown) => (error instanceof StreamNotFound ? [] : Promise.reject(error))) : [];
    const verifiedTo = this.resumed!.log.position!;
    const kept = this.resumedStreams.get(first.streamId);
    this.resumedStreams.delete(first.streamId);
    const later = history.find((e) => store.comparePositions(e.position, verifiedTo) > 0);
    const last = commitsOf(history).at(-1);
    let rewritten: string | undefined;
    if (later) rewritten = `its revision ${later.revision} is at position ${later.position}, after the audit's state (${verifiedTo}), which verified the stream up to revision ${kept?.revision ?? '?'}`;
    else if (kept && (!last || last.at(-1)!.revision !== kept.revision)) rewritten = `the audit's state verified it up to revision ${kept.revision}; the log has it up to revision ${last?.at(-1)!.revision ?? 'none'} before this commit`;
    else if (kept && last && commitHash(last) !== kept.commit) rewritten = `its commit at revision ${kept.revision} is not the one the audit's state verified (hash ${kept.commit})`;
    if (rewritten) this.report('continuation', first, `the stream's past was rewritten since the audit verified it: ${rewritten}`);
    for (const event of history) {
      if (cursor.rules) {
        try {
          const before = cursor.state;
          cursor.state = cursor.rules.decider.evolve(cursor.state, { type: event.type, data: event.data });
          // Its anomalies were reported when it was verified: only the ledger is rebuilt.
          if (categoryOf(event.streamId) === MODEL_CALLS_CATEGORY) this.modelCalls.ledgerEvent(event, before, cursor.state);
        } catch {
          // Reported when it was verified.
        }
      }
      cursor.revision = event.revision;
    }
    cursor.lastCommit = last;
  }

  /** A SettingsRecorded puts its value in force for the commands after it. */
  private recordSettings(event: RecordedEvent): void {
    try {
      this.rules.record(event);
    } catch (error) {
      this.report('decision', event, `the recorded settings are not a valid policy (the value before stays in force): ${(error as Error).message}`);
    }
  }

  private trackAgent(event: RecordedEvent, state: unknown): void {
    const agent = state as { status: string; agentId?: string; publicKey?: string; roles?: readonly string[] };
    if (agent.status === 'unregistered' || !agent.agentId || !agent.publicKey) return;
    const known = this.agents.get(agent.agentId);
    const retired = known ? (known.publicKey === agent.publicKey ? known.retired : [...known.retired, known.publicKey]) : [];
    this.agents.set(agent.agentId, { publicKey: agent.publicKey, retired, roles: agent.roles ?? [], status: agent.status });
    void event;
  }
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

/** Audits the whole log of `store`. */
export function auditLog(store: EventStore, options: AuditOptions = {}): Promise<AuditReport> {
  return new LogAuditor(options).run(store);
}
