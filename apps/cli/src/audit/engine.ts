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
 *
 * The pass over the log is here; the checks of a commit's decision in decision.ts, following in
 * follow.ts, resuming in resume.ts, the report's types in report.ts, its options in options.ts. Each stream keeps its decider
 * state, its revision and the hash of its last commit (computed on a worker thread when there are
 * workers, as soon as the commit is read), never the commit itself; a one-commit stream (a command
 * id reservation) keeps nothing.
 */
import { AUDIT_LOG_STREAM, authorizeSender, categoryOf, commandByType, MODEL_CALLS_CATEGORY, serviceOfActor, type CommandDefinition, type DataOf, type LogCheckpointRecorded } from '@agora/contracts';
import { checkpointMismatch, COMMAND_ID_CATEGORY, LogHasher, type LogCheckpoint, type LogHead, type SettingsInForce } from '@agora/eventsourcing';
import { backoffDelay, sleep, StoreUnavailable, StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { COMMIT_CHAIN_FIELD, envelopeOfMetadata, genesisCommitHash, serviceKeyAt, type SignedCommand } from '@agora/identity';
import { decideAgain } from './decision.js';
import { followLog } from './follow.js';
import { ModelCallAttribution } from './model-calls.js';
import type { AuditOptions, TrustedKey } from './options.js';
import { sortFindings, type AuditPosition, type AuditReport, type Check, type Finding, type ProtocolSummary } from './report.js';
import { discontinuity, streamHistory } from './resume.js';
import { AuditRules, type AggregateRules } from './rules.js';
import { timed } from './stages.js';
import type { AgentKeys, AuditSnapshot, AuditState } from './state.js';
import { verifyTaskOf, type HashTask } from './tasks.js';
import { SignatureVerifier } from './verifier.js';

export type { AuditOptions, SettledAudit, TrustedKey } from './options.js';
export { noStageTimes, STAGES, type Stage, type StageTimes } from './stages.js';
export { CHECKS, type AuditPosition, type AuditProgress, type AuditReport, type Check, type Finding, type ProtocolSummary } from './report.js';
export { decisionDifference } from './decision.js';

/** A stream's last commit as the chain needs it: its last revision and its hash, once computed. */
interface ChainHead {
  revision: number;
  hash: string | undefined;
  /** Told the hash when it is computed (a commit read before its predecessor's hash came back). */
  waiting: ((hash: string) => void)[] | undefined;
}

interface StreamCursor {
  state: unknown;
  revision: number;
  rules: AggregateRules | undefined;
  /** The stream's last commit, which the next one links to (per-commit hash chain). */
  last: ChainHead | undefined;
}

const UNKNOWN_PROTOCOL = 'other';
/** Streams that take one commit only (command id reservations): neither a cursor nor a chain hash is kept for them. */
const ONE_COMMIT_CATEGORIES = new Set([COMMAND_ID_CATEGORY]);
/** Recorded checkpoints a following audit meets live cover a count it hashed a little earlier: the heads kept for them. */
const RECENT_HEADS = 65_536;
const DEFAULT_STATE_STREAMS = 100_000;

/** The signer of an envelope: its key then, the keys it had before (a signature by one of those is named), its roles then. */
interface Signer {
  publicKey: string | undefined;
  retired: readonly string[];
  roles: readonly string[];
  status: string;
  /** Why there is no key in force, when there is none. */
  missing?: string;
}

/** Calls `use` with the head's hash, now or once it is computed. */
function whenHashed(head: ChainHead, use: (hash: string) => void): void {
  if (head.hash !== undefined) use(head.hash);
  else (head.waiting ??= []).push(use);
}

export class LogAuditor {
  /** The deciders under the settings in force at the position reached. */
  private readonly rules: AuditRules;
  private readonly streams = new Map<string, StreamCursor>();
  /** One-commit streams met (they have no cursor). */
  private oneCommitStreams = 0;
  private readonly agents = new Map<string, AgentKeys>();
  private readonly trusted: Map<string, TrustedKey>;
  private readonly findings: Finding[] = [];
  private readonly protocols: Record<string, ProtocolSummary> = {};
  private readonly hasher: LogHasher;
  private readonly verifier: SignatureVerifier;
  private readonly modelCalls = new ModelCallAttribution();
  /** The recorded checkpoints by the number of events they cover, with the event that records each. */
  private checkpoints = new Map<number, { checkpoint: LogCheckpoint; recorded: Pick<RecordedEvent, 'streamId' | 'revision' | 'position' | 'type'> }>();
  private checkpointsVerified = 0;
  private events = 0;
  private commands = 0;
  private pending: RecordedEvent[] = [];
  /**
   * The failure of a step that read the store mid-commit (a stream's history, while the log was
   * unreachable): the events hashed so far are no longer all checked, so no state is taken after
   * it, and every later step fails with it. A following audit stops on it and is resumed from the
   * last state taken before.
   */
  private broken: unknown;
  /** The log's head before the last event hashed: a state carries it so that a resume can hash that event again. */
  private previousHead: LogHead;
  private lastRecordedAt: string | undefined;
  /** Recent heads by count, for checkpoints recorded while the audit follows. */
  private readonly recentHeads = new Map<number, LogHead>();
  /** Each stream's last commit (revision, hash), the most recently written last (what a state keeps, bounded). */
  private readonly chainHeads = new Map<string, ChainHead>();
  /** Streams a resumed audit found in its state: their history is read again, and checked against it, when they continue. */
  private readonly resumedStreams = new Map<string, { revision: number; commit: string }>();
  private readonly resumed: AuditState | undefined;
  private store: EventStore | undefined;
  private following = false;
  /** The signature check of the commit in hand (its id): the commit's hash reuses its payload's canonical JSON. */
  private payloadOf: number | undefined;

  constructor(private readonly options: AuditOptions = {}) {
    if (options.follow && !options.signal) throw new TypeError('a following audit needs a signal to stop it');
    this.rules = new AuditRules(options.policies, (options.trusted ?? []).map((t) => t.agentId));
    const settings = options.resume?.settings ?? options.settings;
    if (settings) this.rules.resume(settings);
    this.trusted = new Map((options.trusted ?? []).map((t) => [t.agentId, t]));
    this.verifier = new SignatureVerifier(options.workers ?? 0, options.stages);
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
        this.chainHeads.set(streamId, { revision, hash: commit, waiting: undefined });
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
      if (this.resumed) {
        const reason = await discontinuity(store, this.resumed);
        if (reason !== undefined) this.report('continuation', { streamId: '$all', revision: this.resumed.log.count - 1, position: this.resumed.log.position!, type: '-' }, reason);
        continues = reason === undefined;
      }
      if (continues) {
        const after = this.hasher.current.position;
        const { stages } = this.options;
        let read = performance.now();
        // With the events' stored bytes (where the store keeps them): the log hash is computed over them.
        for await (const event of store.readAll(after === undefined ? { stored: true } : { after, stored: true })) {
          if (stages) stages.read += performance.now() - read;
          // Stopped: at the end of a commit, so that what was checked is a whole number of commits.
          if (signal?.aborted && this.startsCommit(event)) break;
          await this.add(event);
          if (stages) read = performance.now();
          if (this.options.onProgress && (this.events & 255) === 0 && performance.now() >= nextProgress) {
            nextProgress = performance.now() + everyMs;
            progress();
          }
        }
        await this.settle();
        // The log as it stood reaches its last checkpoint (one recorded later, while following, is not there yet).
        if (!signal?.aborted) this.checkTruncation(this.hasher.current.position);
        const { follow } = this.options;
        if (follow && !signal?.aborted) {
          const hasher = this.hasher;
          await followLog(
            store,
            {
              get position() {
                return hasher.current.position;
              },
              add: (event) => this.add(event),
              settle: () => this.settle(),
              settled: (following) => {
                this.following = following;
                follow.onSettled?.(this);
              },
            },
            follow.idleMs ?? 20,
            signal!,
          );
        }
      }
    } finally {
      await this.verifier.close();
    }
    progress();
    sortFindings(this.findings);
    return {
      events: this.events,
      commands: this.commands,
      streams: this.streams.size + this.oneCommitStreams,
      checkpoints: { recorded: this.checkpoints.size, verified: this.checkpointsVerified, lastCount: Math.max(0, ...this.checkpoints.keys()) || undefined },
      protocols: this.protocols,
      modelCalls: this.modelCalls.ledgers(),
      findings: this.findings,
      elapsedMs: performance.now() - started,
      ...(this.resumed ? { resumed: { position: this.resumed.log.position, events: this.resumed.events, findings: this.resumed.findings } } : {}),
    };
  }

  /** Checks every commit read so far (the last one included) and waits for its signatures. */
  private settle(): Promise<void> {
    return this.step(() => this.settleAll());
  }

  private async settleAll(): Promise<void> {
    await this.endCommit();
    const { stages } = this.options;
    const waiting = performance.now();
    await this.verifier.drain();
    if (stages) stages.waiting += performance.now() - waiting;
  }

  /** Whether `event` begins a new commit (the one in hand, if any, is whole). */
  private startsCommit(event: RecordedEvent): boolean {
    const first = this.pending[0];
    return !first || first.streamId !== event.streamId || first.metadata['commandId'] === undefined || first.metadata['commandId'] !== event.metadata['commandId'];
  }

  private noteCheckpoint(e: RecordedEvent): void {
    const { recordedAt: _, ...checkpoint } = e.data as DataOf<typeof LogCheckpointRecorded>;
    if (this.checkpoints.has(checkpoint.count)) return;
    this.checkpoints.set(checkpoint.count, { checkpoint, recorded: { streamId: e.streamId, revision: e.revision, position: e.position, type: e.type } });
    // Recorded after the audit hashed past it (while following): compared with the head it had then.
    const hashed = this.hasher.current.count;
    if (checkpoint.count > hashed || (this.resumed && checkpoint.count <= this.resumed.log.count)) return;
    const head = this.recentHeads.get(checkpoint.count);
    if (!head) return;
    const mismatch = checkpointMismatch(checkpoint, head);
    if (mismatch) this.report('checkpoint', e, mismatch);
    else this.checkpointsVerified++;
  }

  /** True once a step failed (see `broken`): the audit cannot go on, nor be saved. */
  get failed(): boolean {
    return this.broken !== undefined;
  }

  /** Runs a step of the audit; once one has failed, none runs again. */
  private async step(work: () => Promise<void>): Promise<void> {
    if (this.broken !== undefined) throw this.broken;
    try {
      await work();
    } catch (error) {
      this.broken = error;
      throw error;
    }
  }

  private add(event: RecordedEvent): Promise<void> {
    return this.step(() => this.addEvent(event));
  }

  private async addEvent(event: RecordedEvent): Promise<void> {
    this.events++;
    this.previousHead = this.hasher.current;
    const head = timed(this.options.stages, 'hashing', () => this.hasher.add(event));
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
  snapshot(): AuditSnapshot {
    if (this.broken !== undefined) throw new Error(`no audit state is taken after a failed step (${(this.broken as Error).message ?? String(this.broken)}): resume from the last state taken before it`);
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
      // Every hash is in: the state is taken once the checks are answered.
      streams: [...this.chainHeads].map(([streamId, head]) => [streamId, head.revision, head.hash!]),
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
    const category = categoryOf(first.streamId);
    const rules = this.rules.get(category);
    let cursor = this.streams.get(first.streamId);
    if (!cursor) {
      cursor = { state: rules?.decider.initialState(), revision: -1, rules, last: undefined };
      const oneCommit = ONE_COMMIT_CATEGORIES.has(category);
      // A one-commit stream is counted, not kept (a commit after its first is checked against its history, read again from the log).
      if (!oneCommit) this.streams.set(first.streamId, cursor);
      else if (first.revision === 0) this.oneCommitStreams++;
      if (first.revision > 0 ? oneCommit || this.resumed : this.resumedStreams.has(first.streamId)) await this.restoreStream(cursor, first);
    } else cursor.rules = rules;
    this.checkChain(cursor, commit);
    this.payloadOf = undefined;
    const accepted = await this.checkEnvelope(commit);
    if (accepted) {
      const found = timed(this.options.stages, 'decisions', () => decideAgain(cursor.rules, cursor.state, commit, accepted.definition));
      if (found) this.report('decision', found.event, found.reason);
    }
    await this.fold(cursor, commit, this.payloadOf);
  }

  /**
   * Revisions follow one another, and the commit links to the stream's previous commit
   * (prevCommitHash: the genesis value, or the previous commit's hash, computed when it was read,
   * on a worker thread when there are workers).
   */
  private checkChain(cursor: StreamCursor, commit: readonly RecordedEvent[]): void {
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
    const last = cursor.last;
    if (last === undefined) {
      if (link !== genesisCommitHash(first.streamId)) this.report('chain', first, 'the first commit of the stream does not carry the genesis value: a commit before it was removed');
      return;
    }
    whenHashed(last, (hash) => {
      if (hash !== link) this.report('chain', first, `prevCommitHash does not match the stream's previous commit (revision ${last.revision}): that commit was edited, or one between them removed`);
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

  /** Submits the signature check; the id of the check that answers it is kept for the commit's hash (`payloadOf`). */
  private async checkSignature(first: RecordedEvent, envelope: SignedCommand, signer: Signer): Promise<void> {
    const { stored } = first;
    const task = verifyTaskOf(envelope, signer.publicKey!, stored && stored.bytes.subarray(stored.metadata[0], stored.metadata[1]));
    this.payloadOf = await this.verifier.submit(task, (valid) => {
      if (valid) return;
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

  /** Folds the recorded events (what the services folded), and keeps the agents' keys and roles. */
  private async fold(cursor: StreamCursor, commit: readonly RecordedEvent[], payloadOf: number | undefined): Promise<void> {
    timed(this.options.stages, 'decisions', () => this.foldEvents(cursor, commit));
    const { streamId } = commit[0]!;
    // A one-commit stream is not linked to again: its commit is not hashed.
    if (ONE_COMMIT_CATEGORIES.has(categoryOf(streamId))) return;
    const head: ChainHead = { revision: commit.at(-1)!.revision, hash: undefined, waiting: undefined };
    cursor.last = head;
    this.keepChainHead(streamId, head);
    // Hashed now, where signatures are checked: only what the chain covers of each event goes there
    // (to a worker thread, the bytes the store holds of it when it hands them).
    const stored = commit.every((e) => e.stored !== undefined) ? commit.map((e) => e.stored!) : undefined;
    const task: HashTask = { commit: commit.map((e) => ({ id: e.id, type: e.type, ...(e.written ?? { data: e.data, metadata: e.metadata }) })), payloadOf };
    if (stored) task.stored = stored;
    await this.verifier.submitHash(task, (hash) => {
      head.hash = hash;
      for (const use of head.waiting?.splice(0) ?? []) use(hash);
    });
  }

  /** Folds the recorded events into the stream's state (what the services folded), and keeps the agents' keys and roles. */
  private foldEvents(cursor: StreamCursor, commit: readonly RecordedEvent[]): void {
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
      if (event.streamId.startsWith('agent-')) this.trackAgent(event, cursor.state);
      if (event.streamId === AUDIT_LOG_STREAM && event.type === 'LogCheckpointRecorded') this.noteCheckpoint(event);
    }
  }

  /** The stream's last commit, for a state (the most recently written streams, at most `stateStreams`). */
  private keepChainHead(streamId: string, head: ChainHead): void {
    this.chainHeads.delete(streamId);
    this.chainHeads.set(streamId, head);
    if (this.chainHeads.size > (this.options.stateStreams ?? DEFAULT_STATE_STREAMS)) this.chainHeads.delete(this.chainHeads.keys().next().value!);
  }

  /**
   * A stream met with events before the commit that this audit has not kept: a stream a resumed
   * audit meets again (its history up to the state's position is read and folded: it was checked
   * then; resume.ts checks it against the state), or a one-commit stream with a second commit.
   */
  private async restoreStream(cursor: StreamCursor, first: RecordedEvent): Promise<void> {
    const kept = this.resumedStreams.get(first.streamId);
    this.resumedStreams.delete(first.streamId);
    // A one-commit stream has no cursor, whenever its first commit was: its history is only read (a state keeps none).
    const checked = this.resumed && !ONE_COMMIT_CATEGORIES.has(categoryOf(first.streamId));
    const { history, last, rewritten } = await this.patiently(() => streamHistory(this.store!, first, checked ? { verifiedTo: this.resumed!.log.position!, kept } : undefined));
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
    cursor.last = last && { ...last, waiting: undefined };
  }

  /**
   * A read of the log mid-commit, tried again while the store is unavailable (a partition, a node
   * restarting), for up to `unavailableWaitMs`, unless the audit is stopped: a following audit rides
   * out what its subscription rides out, instead of ending on it.
   */
  private async patiently<T>(read: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const { signal } = this.options;
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (!(error instanceof StoreUnavailable) || signal?.aborted || Date.now() - started >= (this.options.unavailableWaitMs ?? 120_000)) throw error;
        await sleep(backoffDelay(attempt, { maxDelayMs: 2_000 }), signal);
      }
    }
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
    // A registry entry under a bootstrap operator's id, with another key, put there by someone else: the
    // registry's word wins over the configured key, which then signs nothing (the operator is locked out).
    const bootstrap = this.trusted.get(agent.agentId);
    const actor = String(event.metadata['actor'] ?? '');
    if (bootstrap !== undefined && (event.type === 'AgentRegistered' || event.type === 'AgentKeyRotated') && agent.publicKey !== bootstrap.publicKey && actor !== agent.agentId) {
      this.report('authorization', event, `${actor} put a registry entry under the bootstrap operator's id ${agent.agentId} with another key than the configured one: it shadows the bootstrap operator, whose configured key no longer signs`);
    }
  }
}

/** Audits the whole log of `store`. */
export function auditLog(store: EventStore, options: AuditOptions = {}): Promise<AuditReport> {
  return new LogAuditor(options).run(store);
}
