import type { CommandDefinition, Reply, QueryDefinition, CommandResult } from '@agora/contracts';
import type { SignedCommand } from '@agora/identity';

/**
 * A committed event as a listener receives it, over SSE (`GET /v1/events`) and over NATS
 * (`agora.evt.<category>.<EventType>`) alike.
 */
export interface AgoraEvent<D = unknown> {
  id: string;
  type: string;
  streamId: string;
  revision: number;
  /** Opaque global position: hand it back as `after` to continue strictly after this event. */
  position: string;
  recordedAt: string;
  data: D;
  metadata: Record<string, unknown>;
}

/** Which events to follow, and from where. */
export interface EventFilter {
  /** Stream categories to keep (`proposal`, `voting_session`, ...); empty or absent: all. */
  categories?: readonly string[];
  /** Event types to keep; empty or absent: all. */
  types?: readonly string[];
  /**
   * Continue strictly after this position (a checkpoint, or a command's `position`). Over HTTP the
   * gateway replays what came after it; over NATS too when the client was given the gateway's URL
   * (`nats.catchUpUrl`), else only live events arrive (core NATS keeps nothing for absent
   * listeners), those at or before it are skipped.
   */
  after?: string;
  /** Without `after`: only events committed from now on (default), or every event from the first (`start`). */
  from?: 'start' | 'end';
  /** Called once the stream is open: from then on no event of interest is missed. */
  onOpen?: () => void;
  signal?: AbortSignal;
}

/** How the client reaches Agora: the gateway over HTTP, or NATS. */
export interface Transport {
  readonly kind: 'http' | 'messaging';
  command(definition: CommandDefinition, envelope: SignedCommand, timeoutMs: number): Promise<Reply<CommandResult>>;
  query(definition: QueryDefinition, params: Record<string, unknown>, timeoutMs: number): Promise<Reply<unknown>>;
  events(filter: EventFilter): AsyncIterable<AgoraEvent>;
  close(): Promise<void>;
}
