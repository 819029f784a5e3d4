import { AgoraError, type CommandResult, type DialecticSessionView, type ErrorBody, type Condition, type ProposalView, type Reply, type ResolutionPayload, type VotingSessionView } from '@agora/contracts';
import { latestPosition, resolutionPayload, signResolution } from '@agora/domain-dialectic';
import { publicKeyOf } from '@agora/identity';
import { commandDefinition, queryDefinition, type CommandInput, type CommandName, type QueryName, type QueryParams, type QueryResult } from './catalog.js';
import { HttpTransport } from './http.js';
import { MessagingTransport, type NatsOptions } from './nats.js';
import { signedEnvelope, signingKey, type EnvelopeOptions, type Signer } from './signing.js';
import type { AgoraEvent, EventFilter, Transport } from './transport.js';
import { waitForDecision, waitForResolution, waitForVerdict, type WaitOptions } from './wait.js';

export const DEFAULT_TIMEOUT_MS = 15_000;

export interface ConnectOptions {
  /** The gateway's URL (`http://127.0.0.1:8080`). */
  url?: string;
  /** NATS instead of HTTP: servers and, where the server wants them, credentials (without them, a signer connects as itself: its nkey). */
  nats?: NatsOptions;
  /** Who signs the commands; without it the client only reads (queries, events). */
  signer?: Signer;
  /** Timeout of each command or query (default 15 s). */
  timeoutMs?: number;
  /** Over HTTP: the audience of the signer's read tokens; default the one the gateway's GET /health names. */
  readAudience?: string;
}

export interface SendOptions extends EnvelopeOptions {
  timeoutMs?: number;
}

export interface QueryOptions {
  /** Read-your-writes: answer only once the read model has reached this position (a command's `position`); else `read_model_behind`. */
  minPosition?: string;
  timeoutMs?: number;
}

/** A refusal, as Agora said it: its stable error `code`, message and details. */
export function replyError(error: ErrorBody): AgoraError {
  return new AgoraError(error.code, error.message, error.details);
}

/**
 * A connection to Agora for one agent (or a reader without a key): signed commands, typed queries
 * and the log's events, over the HTTP gateway or NATS. The key never leaves the process.
 */
export class Agora {
  private constructor(
    readonly transport: Transport,
    readonly agentId: string | undefined,
    private readonly secretKey: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** A client over a transport of the caller's (e.g. the gateway's own bus); `close()` closes the transport. */
  static over(transport: Transport, options: { signer?: Signer; timeoutMs?: number } = {}): Agora {
    const { agentId, secretKey } = readSigner(options.signer);
    return new Agora(transport, agentId, secretKey, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  static async connect(options: ConnectOptions): Promise<Agora> {
    const { agentId, secretKey } = readSigner(options.signer);
    if ((options.url === undefined) === (options.nats === undefined)) throw new TypeError('connect to Agora with either `url` (the HTTP gateway) or `nats`');
    // Over HTTP the signer also signs the read tokens of the client's reads (a gateway that closes reads wants them); over NATS too (services with closed reads).
    const reader = agentId !== undefined && secretKey !== undefined ? { agentId, secretKey, ...(options.readAudience === undefined ? {} : { audience: options.readAudience }) } : undefined;
    const nats = { ...(options.nats as NatsOptions), ...(options.readAudience === undefined ? {} : { readAudience: options.readAudience }) };
    const transport = options.url !== undefined ? new HttpTransport(options.url, reader) : await MessagingTransport.connect(nats, agentId !== undefined && secretKey !== undefined ? { agentId, secretKey } : undefined);
    return new Agora(transport, agentId, secretKey, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  /** Signs and sends a command; resolves with its reply (a refusal is `{ok: false, error}`). */
  async trySend<N extends CommandName>(type: N, payload: CommandInput<N>, options: SendOptions = {}): Promise<Reply<CommandResult>> {
    const definition = commandDefinition(type);
    if (this.secretKey === undefined || this.agentId === undefined) throw new TypeError(`${type}: this client has no key to sign with (connect with a signer)`);
    const envelope = signedEnvelope({ agentId: this.agentId, secretKey: this.secretKey }, type, payload as Record<string, unknown>, options);
    return this.transport.command(definition, envelope, options.timeoutMs ?? this.timeoutMs);
  }

  /** Signs and sends a command; resolves with its CommandResult (with the `position` to read one's writes), throws an AgoraError on a refusal. */
  async send<N extends CommandName>(type: N, payload: CommandInput<N>, options: SendOptions = {}): Promise<CommandResult> {
    const reply = await this.trySend(type, payload, options);
    if (!reply.ok) throw replyError(reply.error);
    return reply.result;
  }

  /** Asks a query; a refusal is `{ok: false, error}`. */
  async tryQuery<N extends QueryName>(name: N, params: QueryParams<N>, options: QueryOptions = {}): Promise<Reply<QueryResult<N>>> {
    const definition = queryDefinition(name);
    const body = { ...(params as Record<string, unknown>), ...(options.minPosition === undefined ? {} : { minPosition: options.minPosition }) };
    return (await this.transport.query(definition, body, options.timeoutMs ?? this.timeoutMs)) as Reply<QueryResult<N>>;
  }

  /** Asks a query; throws an AgoraError on a refusal (`not_found`, `read_model_behind`, ...). */
  async query<N extends QueryName>(name: N, params: QueryParams<N>, options: QueryOptions = {}): Promise<QueryResult<N>> {
    const reply = await this.tryQuery(name, params, options);
    if (!reply.ok) throw replyError(reply.error);
    return reply.result;
  }

  /** The log's events as they are committed (see EventFilter for where a stream starts). Stop it with `filter.signal` or by leaving the loop. */
  events(filter: EventFilter = {}): AsyncIterable<AgoraEvent> {
    return this.transport.events(filter);
  }

  /** Waits on the log for a proposal's verdict (see WaitOptions: timeout, cancellation, progress, `final`). */
  waitForVerdict(proposalId: string, options?: WaitOptions): Promise<ProposalView> {
    return waitForVerdict(this, proposalId, options);
  }

  /** Waits on the log for a voting session's decision. */
  waitForDecision(sessionId: string, options?: WaitOptions): Promise<VotingSessionView> {
    return waitForDecision(this, sessionId, options);
  }

  /** Waits on the log for a recovery's resolution. */
  waitForResolution(sessionId: string, options?: WaitOptions): Promise<DialecticSessionView> {
    return waitForResolution(this, sessionId, options);
  }

  /** The SignResolution payload for a converged recovery: this agent's signature of the resolution (the key stays here). */
  signResolution(sessionId: string, payload: ResolutionPayload): { sessionId: string; publicKey: string; signature: string } {
    if (this.secretKey === undefined || this.agentId === undefined) throw new TypeError('this client has no key to sign with (connect with a signer)');
    return { sessionId, publicKey: publicKeyOf(this.secretKey), signature: signResolution(payload, this.agentId, this.secretKey) };
  }

  /**
   * The `publicKey` and `signature` of a RecordTieBreak siding with `side`: this agent's signature of
   * the resolution that side's latest position makes (the key stays here). Undefined when that side has no position.
   */
  signTieBreak(session: DialecticSessionView, escalation: number, side: 'agent' | 'reviewer'): { publicKey: string; signature: string } | undefined {
    const position = latestPosition(session, side);
    if (position === null) return undefined;
    const { publicKey, signature } = this.signResolution(session.sessionId, resolutionPayload({ ...this.resolutionBase(session), ...position, decidedBy: 'tie_break', escalation, decider: this.agentId! }));
    return { publicKey, signature };
  }

  /** The `publicKey` and `signature` of a DecideRecovery that resumes the agent: this operator's signature of the resolution it decides. */
  signRecoveryDecision(session: DialecticSessionView, rootCause: string, conditions: readonly Condition[]): { publicKey: string; signature: string } {
    const payload = resolutionPayload({ ...this.resolutionBase(session), rootCause, conditions, decidedBy: 'operator', escalation: session.escalations.at(-1)?.escalation ?? null, decider: this.agentId! });
    const { publicKey, signature } = this.signResolution(session.sessionId, payload);
    return { publicKey, signature };
  }

  private resolutionBase(session: DialecticSessionView) {
    if (this.agentId === undefined) throw new TypeError('this client has no key to sign with (connect with a signer)');
    return { sessionId: session.sessionId, agentId: session.agentId, reviewer: session.reviewer, pause: session.pause };
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

function readSigner(signer: Signer | undefined): { agentId?: string; secretKey?: string } {
  return signer === undefined ? {} : signingKey(signer);
}
