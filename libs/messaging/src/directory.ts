import { publicKeyObject } from '@agora/identity';

/** What the command gate needs to know about an agent. */
export interface AgentRecord {
  /** `ed25519:<base64url>`: the key commands must be signed with now (a rotated-out key no longer verifies). */
  publicKey: string;
  roles: readonly string[];
  status: 'active' | 'disabled';
  /**
   * Set while the agent's circuit breaker is open (seed 001): the gate refuses its commands with
   * `forbidden`, except the types in `allowed` (what it needs to recover). Absent: not paused.
   */
  paused?: PausedAgent;
  /**
   * The conditions of the agent's last resume that the gates enforce (see enforcedConditions in
   * @agora/domain-dialectic). Absent: none.
   */
  conditions?: GateConditions;
}

/** What a command gate enforces of a resumed agent's conditions. */
export interface GateConditions {
  /** rate_limit: commands per minute this gate accepts from the agent (health reports excepted). */
  rateLimitPerMinute: number | null;
  /** probation: until `until`, anything but a health report needs a report at most `reportEveryMs` old (counted from `since` at the earliest). */
  probation: { since: string; until: string; reportEveryMs: number; lastReportAt: string | null } | null;
}

/** A paused agent, as the command gate sees it. */
export interface PausedAgent {
  /** Its recovery session. */
  sessionId: string | null;
  pausedAt: string | null;
  /** Command types it may still send (its health reports, its part in its recovery). */
  allowed: readonly string[];
}

/**
 * Who may send commands. The registry implements it from its event log; a bootstrap operator
 * from configuration is a StaticAgentDirectory. A remote lookup may answer asynchronously.
 */
export interface AgentDirectory {
  get(agentId: string): AgentRecord | undefined | Promise<AgentRecord | undefined>;
  /**
   * Calls `listener` with an agent's id after its record may have changed (registered, updated,
   * key rotated, disabled: ask `get` for what it is now); returns the unsubscribe. A directory
   * whose records never change has none. It may be called for a record that did not change.
   */
  watch?(listener: (agentId: string) => void): () => void;
}

/**
 * A fixed set of agents, e.g. the bootstrap operator from configuration, or test fixtures.
 * Keys are checked here, so a mistyped key in the configuration stops the service at start
 * rather than failing every command of that agent later.
 */
export class StaticAgentDirectory implements AgentDirectory {
  private readonly agents: ReadonlyMap<string, AgentRecord>;

  constructor(agents: Iterable<readonly [string, AgentRecord]> | Record<string, AgentRecord>) {
    const entries = Symbol.iterator in agents ? [...(agents as Iterable<readonly [string, AgentRecord]>)] : Object.entries(agents);
    for (const [id, record] of entries) {
      try {
        publicKeyObject(record.publicKey);
      } catch (error) {
        throw new Error(`agent "${id}": ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.agents = new Map(entries.map(([id, record]) => [id, Object.freeze({ ...record, roles: [...record.roles] })]));
  }

  get(agentId: string): AgentRecord | undefined {
    return this.agents.get(agentId);
  }
}

/**
 * Asks each directory in turn; the first that knows the agent answers, even when it says
 * "disabled". Put the authoritative source first (the registry), the bootstrap operator last,
 * so that once the registry knows the operator its word wins (e.g. a rotated key).
 */
export class CompositeAgentDirectory implements AgentDirectory {
  private readonly directories: readonly AgentDirectory[];

  constructor(...directories: AgentDirectory[]) {
    this.directories = directories;
  }

  /** Every directory's changes that can say them. */
  watch(listener: (agentId: string) => void): () => void {
    const unwatch = this.directories.map((directory) => directory.watch?.(listener));
    return () => unwatch.forEach((stop) => stop?.());
  }

  async get(agentId: string): Promise<AgentRecord | undefined> {
    for (const directory of this.directories) {
      const record = await directory.get(agentId);
      if (record !== undefined) return record;
    }
    return undefined;
  }
}
