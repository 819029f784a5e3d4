import { SERVICE_ROLE, serviceOfActor } from '@agora/contracts';
import { ALLOWED_WHILE_PAUSED, isPaused } from '@agora/domain-common';
import { agentDecider, agentStreamId, type Agent, type AgentEvent } from '@agora/domain-registry';
import { LruMap, mapSnapshotCodec, ProjectionRunner, type Projection, type ReadModelPositions, type SnapshotStore } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { serviceKeyAt, type ServiceKeyring } from '@agora/identity';
import { CompositeAgentDirectory, StaticAgentDirectory, type AgentDirectory, type AgentRecord } from '@agora/messaging';

/** An agent as the registry's log has it, with the revision of its stream. */
export interface KnownAgent extends Agent {
  revision: number;
}

export type AgentModel = Map<string, KnownAgent>;

/** Folds every `agent-*` stream with the registry decider's own `evolve`, so the directory and the decider cannot disagree. */
export const agentsProjection: Projection<AgentModel> = {
  name: 'agents',
  categories: ['agent'],
  initial: () => new Map(),
  // Bump when the registry decider's evolve or the Agent record changes: older snapshots are then rebuilt from the log.
  snapshot: mapSnapshotCodec<KnownAgent>(1),
  apply(model, event) {
    const next = evolveAgent(model.get(agentIdOf(event)), event);
    if (next) model.set(next.agentId, next);
  },
};

function agentIdOf(event: RecordedEvent): string {
  return event.streamId.slice('agent-'.length);
}

function evolveAgent(current: KnownAgent | undefined, event: RecordedEvent): KnownAgent | undefined {
  const state = agentDecider.evolve(current ?? agentDecider.initialState(), { type: event.type, data: event.data } as AgentEvent);
  return state.status === 'unregistered' ? undefined : { ...state, revision: event.revision };
}

const allowedWhilePaused: readonly string[] = [...ALLOWED_WHILE_PAUSED];

/** What the command gate needs of an agent: its key, roles and status, and while its circuit breaker is open, that it is paused. */
export function toAgentRecord(agent: Agent): AgentRecord {
  const record: AgentRecord = { publicKey: agent.publicKey, roles: agent.roles, status: agent.status };
  const enforced = agent.breaker.enforced;
  if (enforced) {
    record.conditions = {
      rateLimitPerMinute: enforced.rateLimitPerMinute,
      probation: enforced.probation && { since: enforced.probation.since, until: enforced.probation.until, reportEveryMs: enforced.probation.reportEveryMs, lastReportAt: agent.breaker.lastReportAt },
    };
  }
  if (isPaused(agent.breaker)) record.paused = { sessionId: agent.breaker.sessionId, pausedAt: agent.breaker.pausedAt, allowed: allowedWhilePaused };
  return record;
}

export interface RegistryDirectoryOptions {
  /**
   * How long, in ms, an id found in neither the live model nor the log is taken as unknown without
   * reading its stream again. Default 5,000; 0 reads every time.
   */
  unknownTtlMs?: number;
  /** Unknown ids remembered at most (the least recently asked go first). Default 10,000. */
  maxUnknown?: number;
  /** Clock for the TTL. Default Date.now. */
  now?: () => number;
  /** Where the model is saved and restored from, so a restart folds only the log's new events. Default: none (the whole log at every start). */
  snapshots?: SnapshotStore;
  /** The process's read models (read your writes): the directory counts itself in. */
  positions?: ReadModelPositions;
}

export const DEFAULT_UNKNOWN_TTL_MS = 5_000;
export const DEFAULT_MAX_UNKNOWN = 10_000;

/**
 * Who may send commands, read off the registry's streams: a read model of every agent, kept live
 * by a catch-up subscription. Every service process runs one over the shared store, so no service
 * asks another who an agent is.
 *
 * The model trails the log by the time it takes an event to reach the subscription. An agent the
 * model does not know yet is read from its stream directly, so a command sent right after the
 * agent's registration is not refused as `unknown_actor`.
 *
 * An id that stream read finds unregistered is remembered as unknown for `unknownTtlMs`, so that
 * an actor the log never knows (a bootstrap operator, configured outside the log and asked for on
 * every command it signs; or a stranger sending garbage) costs one read per TTL, not one per
 * command. Concurrent asks for one id share one read. The price: an agent registered after such a
 * negative answer, and asked for within the TTL before the model has its registration, is taken
 * as unknown (the live model usually catches up within milliseconds, and the model is always asked
 * first, so the window is the model's lag, at most the TTL). An agent never asked for before its
 * registration is unaffected.
 */
export class RegistryDirectory implements AgentDirectory {
  private readonly runner: ProjectionRunner<AgentModel>;
  private readonly unknownTtlMs: number;
  private readonly now: () => number;
  /** Ids the log did not know when last read, with the time that answer stops being used. */
  private readonly unknown: LruMap<string, number>;
  /** Stream reads in progress, by agent id. */
  private readonly reading = new Map<string, Promise<KnownAgent | undefined>>();
  private started: Promise<void> | undefined;
  private isCaughtUp = false;
  private readonly watchers = new Set<(agentId: string) => void>();

  constructor(
    private readonly store: EventStore,
    options: RegistryDirectoryOptions = {},
  ) {
    // The model's own projection, which also says whose record it has just folded (watch).
    const projection: Projection<AgentModel> = {
      ...agentsProjection,
      apply: (model, event) => {
        agentsProjection.apply(model, event);
        this.changed(agentIdOf(event));
      },
    };
    this.runner = new ProjectionRunner(store, projection, { ...(options.snapshots ? { snapshots: options.snapshots } : {}), ...(options.positions ? { positions: options.positions } : {}) });
    this.unknownTtlMs = options.unknownTtlMs ?? DEFAULT_UNKNOWN_TTL_MS;
    if (!Number.isFinite(this.unknownTtlMs) || this.unknownTtlMs < 0) throw new RangeError(`unknownTtlMs must be a non-negative number, got ${String(options.unknownTtlMs)}`);
    this.unknown = new LruMap(options.maxUnknown ?? DEFAULT_MAX_UNKNOWN);
    this.now = options.now ?? Date.now;
  }

  /** Resolves once every agent registered before the call is known. */
  start(): Promise<void> {
    this.started = this.runner.start().then(() => {
      this.isCaughtUp = true;
    });
    this.started.catch(() => undefined);
    return this.started;
  }

  /**
   * Resolves once the model has caught up with the log (start's promise): a process may start its
   * parts while the directory catches up, in the same pass over the log; until then one agent is
   * asked for only once it has (its record in a half-folded model may be an old one).
   */
  get caughtUp(): Promise<void> {
    return this.started ?? this.runner.caughtUp;
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Calls `listener` with an agent's id once the model has folded an event of its stream (its record may have changed); returns the unsubscribe. */
  watch(listener: (agentId: string) => void): () => void {
    this.watchers.add(listener);
    return () => void this.watchers.delete(listener);
  }

  private changed(agentId: string): void {
    for (const listener of this.watchers) {
      try {
        listener(agentId);
      } catch {
        // A watcher's failure is its own: the model goes on folding.
      }
    }
  }

  /** Every agent the model knows, in no particular order (page with pageOf rather than sorting them all). */
  all(): IterableIterator<KnownAgent> {
    return this.runner.model.values();
  }

  /** Every agent the model knows, in id order. */
  list(): KnownAgent[] {
    return [...this.runner.model.values()].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  }

  /** One agent: from the model, else (unless the log did not know it a moment ago) from its stream. */
  async agent(agentId: string): Promise<KnownAgent | undefined> {
    // Started and still catching up: its record of the agent may be an old one.
    if (this.started && !this.isCaughtUp) await this.started;
    const known = this.runner.model.get(agentId);
    if (known) return known;
    const unknownUntil = this.unknown.get(agentId);
    if (unknownUntil !== undefined) {
      if (this.now() < unknownUntil) return undefined;
      this.unknown.delete(agentId);
    }
    let reading = this.reading.get(agentId);
    if (!reading) {
      reading = this.readStream(agentId).finally(() => this.reading.delete(agentId));
      this.reading.set(agentId, reading);
    }
    const read = await reading;
    // The model may have caught up meanwhile; its answer is the later one.
    return this.runner.model.get(agentId) ?? read;
  }

  async get(agentId: string): Promise<AgentRecord | undefined> {
    const agent = await this.agent(agentId);
    return agent && toAgentRecord(agent);
  }

  private async readStream(agentId: string): Promise<KnownAgent | undefined> {
    let events: RecordedEvent[];
    try {
      events = await this.store.readStream(agentStreamId(agentId));
    } catch (error) {
      if (!(error instanceof StreamNotFound)) throw error;
      events = [];
    }
    const agent = events.reduce<KnownAgent | undefined>((current, event) => evolveAgent(current, event), undefined);
    if (!agent && this.unknownTtlMs > 0) this.unknown.set(agentId, this.now() + this.unknownTtlMs);
    return agent;
  }
}

/** An operator configured outside the log, so the very first RegisterAgent can be signed. */
export interface BootstrapAgent {
  agentId: string;
  publicKey: string;
}

/**
 * Agora's services as senders (`service:<name>`, docs/decisions/0008-services-sign-what-they-do.md): the key in force now in the
 * keyring (AGORA_SERVICE_PUBLIC_KEYS, or the keys of the services this process runs) and the role
 * `service`. Which commands a service may send is the authorization table's (a command's `issuers`).
 * A service the keyring does not name is unknown.
 */
export function serviceDirectory(keyring: () => ServiceKeyring, now: () => number = Date.now): AgentDirectory {
  return {
    get(actor) {
      const service = serviceOfActor(actor);
      const publicKey = service && serviceKeyAt(keyring(), service, new Date(now()).toISOString());
      return publicKey ? { publicKey, roles: [SERVICE_ROLE], status: 'active' } : undefined;
    },
  };
}

/**
 * The directory every service's command gate uses: the registry first (its word wins once it
 * knows the agent, e.g. after a key rotation or a disable), then the configured bootstrap operators,
 * then, given their keyring, the services (a command one service sends another, e.g. the dialectic's
 * quorum session to the voting service).
 */
export function commandDirectory(registry: RegistryDirectory, bootstrap: readonly BootstrapAgent[], serviceKeys?: () => ServiceKeyring): AgentDirectory {
  const configured = new StaticAgentDirectory(bootstrap.map((a) => [a.agentId, { publicKey: a.publicKey, roles: ['operator'], status: 'active' }] as const));
  return serviceKeys ? new CompositeAgentDirectory(registry, configured, serviceDirectory(serviceKeys)) : new CompositeAgentDirectory(registry, configured);
}
