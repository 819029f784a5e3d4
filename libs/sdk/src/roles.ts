/**
 * Role loops: an agent's part in a protocol as a handler called for each event that asks it to act
 * (a review round it was assigned to, a vote it was drawn for, its turn in a recovery). A loop
 * resumes from its checkpoint after a restart, and never acts twice on one event: the command it
 * sends has an id derived from the event (UUIDv5), so a repeat after a crash is answered by the
 * server as the duplicate it is, and writes nothing.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { uuidV5 as nameUuid } from '@agora/identity';
import {
  AgoraError,
  DEBATE_CATEGORY,
  DIALECTIC_SESSION_CATEGORY,
  PROPOSAL_CATEGORY,
  VOTING_SESSION_CATEGORY,
  type DebateMove,
  type DebateView,
  type DialecticSessionView,
  type ProposalView,
  type ResolutionPayload,
  type VotingSessionView,
} from '@agora/contracts';
import { replyError, type Agora } from './client.js';
import type { CommandInput, CommandName, QueryParams, QueryResult } from './catalog.js';
import { pause } from './http.js';
import type { AgoraEvent } from './transport.js';
import { readAt } from './wait.js';

/** Where a loop keeps the position of the last event it has handled. */
export interface Checkpoint {
  load(): Promise<string | undefined>;
  save(position: string): Promise<void>;
}

/** A checkpoint in a JSON file (`{"position": "..."}`), replaced atomically on each save. */
export function fileCheckpoint(path: string): Checkpoint {
  return {
    async load() {
      try {
        const position = (JSON.parse(await readFile(path, 'utf8')) as { position?: unknown }).position;
        return typeof position === 'string' ? position : undefined;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async save(position) {
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify({ position })}\n`);
      await rename(temporary, path);
    },
  };
}

/** A checkpoint in memory (it does not survive the process: for tests and short-lived loops). */
export function memoryCheckpoint(position?: string): Checkpoint & { position: string | undefined } {
  return {
    position,
    async load() {
      return this.position;
    },
    async save(next) {
      this.position = next;
    },
  };
}

/** Namespace of the command ids role loops derive (UUIDv5, RFC 9562). */
export const ROLE_LOOP_NAMESPACE = '5b3c9d2e-7f41-4a8e-9c6d-0e1f2a3b4c5d';

/** UUIDv5 (SHA-1, RFC 9562 section 5.5) of `name` in `namespace`, by default the role loops' (uuidV5 of @agora/identity). */
export const uuidV5 = (name: string, namespace: string = ROLE_LOOP_NAMESPACE): string => nameUuid(name, namespace);

/**
 * A command a role loop sends in answer to an event; `key` is what makes it one of a kind (default:
 * the event's id): the command id is derived from it.
 */
export type Action = { [N in CommandName]: { type: N; payload: CommandInput<N>; key?: string } }[CommandName];

export interface RoleLoopOptions {
  /** Where the loop resumes after a restart; default: in memory. */
  checkpoint?: Checkpoint;
  /** Without a checkpoint: only events from now on (default), or every event from the first. */
  from?: 'start' | 'end';
  signal?: AbortSignal;
  /** An action Agora refused (illegal_state, forbidden, ...): the event counts as handled. Default: ignored. */
  onRefused?: (error: AgoraError, event: AgoraEvent) => void;
  /** Called after each command the loop sent (and the server accepted, or had already accepted). */
  onActed?: (action: Action, event: AgoraEvent, duplicate: boolean) => void;
}

export interface RoleLoop {
  /** Resolves once the loop follows the log: from then on no event it handles is missed. */
  readonly ready: Promise<void>;
  /** Settles when the loop stops: resolves on stop(), rejects when a handler threw or Agora stayed unreachable. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export interface RoleSpec {
  /** Names the role in the derived command ids (`reviewer`, `validator`, ...). */
  role: string;
  categories: readonly string[];
  types: readonly string[];
  act(event: AgoraEvent): Promise<Action[] | undefined>;
}

const RETRYABLE = new Set(['timeout', 'unavailable', 'conflict', 'internal']);
const RETRIES = 6;
/** What a handler's read may meet for a while (a failover, a read model catching up) and is asked again for, about 50 s in all. */
const READ_RETRYABLE = new Set([...RETRYABLE, 'read_model_behind']);
const READ_RETRIES = 8;

/** Runs a role: for each matching event after the checkpoint, its actions, then the checkpoint moves past the event. */
export function runRoleLoop(agora: Agora, spec: RoleSpec, options: RoleLoopOptions = {}): RoleLoop {
  if (agora.agentId === undefined) throw new TypeError('a role loop acts: connect with a signer');
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  const checkpoint = options.checkpoint ?? memoryCheckpoint();
  const actor = agora.agentId;

  const send = async (action: Action, event: AgoraEvent, index: number): Promise<void> => {
    const commandId = uuidV5(`${spec.role}:${actor}:${action.key ?? event.id}:${index}`);
    for (let attempt = 0; ; attempt++) {
      const reply = await agora.trySend(action.type as CommandName, action.payload as never, { commandId, causationId: event.id });
      if (reply.ok) return options.onActed?.(action, event, reply.result.duplicate);
      const { code, message, details } = reply.error;
      // The same id with another payload: this event was acted on before (a handler that answers differently the second time).
      if (code === 'command_id_reused') return options.onActed?.(action, event, true);
      if (!RETRYABLE.has(code)) return options.onRefused?.(new AgoraError(code, message, details), event);
      if (attempt >= RETRIES || stop.signal.aborted) throw new AgoraError(code, `${spec.role} ${actor}: ${action.type} for event ${event.id}: ${message}`, details);
      await pause(200 * 2 ** attempt, stop.signal);
    }
  };

  // The handler again, from the start, when what it read failed in a way that passes (it sends nothing itself: its actions are sent after).
  const act = async (event: AgoraEvent): Promise<Action[] | undefined> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await spec.act(event);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code !== 'string' || !READ_RETRYABLE.has(code) || attempt >= READ_RETRIES || stop.signal.aborted) throw error;
        await pause(200 * 2 ** attempt, stop.signal);
      }
    }
  };

  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  const run = async () => {
    const after = await checkpoint.load();
    const events = agora.events({ categories: spec.categories, types: spec.types, signal: stop.signal, onOpen: () => opened(), ...(after === undefined ? { from: options.from ?? 'end' } : { after }) });
    for await (const event of events) {
      if (stop.signal.aborted) return;
      const actions = (await act(event)) ?? [];
      for (const [index, action] of actions.entries()) await send(action, event, index);
      await checkpoint.save(event.position);
    }
  };
  const done = run().finally(() => {
    options.signal?.removeEventListener('abort', abort);
    opened();
  });
  return {
    ready,
    done,
    async stop() {
      stop.abort();
      await done.catch(() => undefined);
    },
  };
}

/** What a reviewer answers a round with (the fields of SubmitReview but the round's own). */
export type ReviewAnswer = Omit<CommandInput<'SubmitReview'>, 'proposalId' | 'round' | 'constitution'>;

/** Review rounds that assign this agent: the handler sees the proposal and the constitution it reviews for, and answers with its review (or undefined to stay silent). */
export function onReviewRequested(
  agora: Agora,
  handler: (request: { proposal: ProposalView; round: number; constitution: string; event: AgoraEvent }) => Promise<ReviewAnswer | undefined>,
  options: RoleLoopOptions = {},
): RoleLoop {
  return runRoleLoop(
    agora,
    {
      role: 'reviewer',
      categories: [PROPOSAL_CATEGORY],
      types: ['ReviewRoundOpened'],
      async act(event) {
        const data = event.data as { proposalId: string; round: number; assignments: { constitution: string; reviewer: string }[] };
        const actions: Action[] = [];
        for (const { constitution } of data.assignments.filter((a) => a.reviewer === agora.agentId)) {
          const proposal = await agora.query('GetProposal', { proposalId: data.proposalId }, readAt(event.position));
          const review = await handler({ proposal, round: data.round, constitution, event });
          if (review) actions.push({ type: 'SubmitReview', payload: { ...review, proposalId: data.proposalId, round: data.round, constitution }, key: `${event.id}:${constitution}` });
        }
        return actions;
      },
    },
    options,
  );
}

export type VoteAnswer = Omit<CommandInput<'CastValidatorVote'>, 'sessionId'>;

/** Voting sessions that draw this agent as a validator: the handler sees the session and answers with its vote (or undefined to abstain). */
export function onVoteRequested(agora: Agora, handler: (request: { session: VotingSessionView; event: AgoraEvent }) => Promise<VoteAnswer | undefined>, options: RoleLoopOptions = {}): RoleLoop {
  return runRoleLoop(
    agora,
    {
      role: 'validator',
      categories: [VOTING_SESSION_CATEGORY],
      types: ['VotingSessionCreated'],
      async act(event) {
        const data = event.data as { sessionId: string; validators: { agentId: string }[] };
        if (!data.validators.some((v) => v.agentId === agora.agentId)) return undefined;
        const session = await agora.query('GetVotingSession', { sessionId: data.sessionId }, readAt(event.position));
        const vote = await handler({ session, event });
        return vote ? [{ type: 'CastValidatorVote', payload: { ...vote, sessionId: data.sessionId } }] : undefined;
      },
    },
    options,
  );
}

/** A party's turn in a recovery (seed 001), as the session's `awaiting` and `status` say it. */
export type DialecticTurn =
  | { kind: 'thesis'; session: DialecticSessionView; event: AgoraEvent }
  | { kind: 'antithesis'; session: DialecticSessionView; event: AgoraEvent }
  | { kind: 'synthesis'; round: number; session: DialecticSessionView; event: AgoraEvent };

/** What a party answers its turn with: the command's payload but the session (and the round). */
export type DialecticAnswer =
  | Omit<CommandInput<'SubmitThesis'>, 'sessionId'>
  | Omit<CommandInput<'SubmitAntithesis'>, 'sessionId'>
  | Omit<CommandInput<'SubmitSynthesis'>, 'sessionId' | 'round'>;

/**
 * The aggregate an event is about, read as of that event; undefined when the read is refused as
 * forbidden: where reads are scoped to the parties (closed reads), an agent sees every session's
 * events but reads only the sessions it is a party to, and another's is none of its turns.
 */
async function readAsParty<N extends 'GetDialecticSession' | 'GetDebate'>(agora: Agora, name: N, params: QueryParams<N>, event: AgoraEvent): Promise<QueryResult<N> | undefined> {
  const reply = await agora.tryQuery(name, params, readAt(event.position));
  if (reply.ok) return reply.result;
  if (reply.error.code === 'forbidden') return undefined;
  throw replyError(reply.error);
}

const TURN_COMMAND = { thesis: 'SubmitThesis', antithesis: 'SubmitAntithesis', synthesis: 'SubmitSynthesis' } as const;

/**
 * This agent's turns in recoveries, as the paused agent or as the reviewer drawn for it: thesis,
 * antithesis, synthesis rounds; a converged resolution is signed with the agent's key (the
 * handler is not asked). One command per turn: its id is derived from the session, the status and
 * the round, so a turn is taken once however many events announce it.
 */
export function onDialecticTurn(agora: Agora, handler: (turn: DialecticTurn) => Promise<DialecticAnswer | undefined>, options: RoleLoopOptions = {}): RoleLoop {
  const taken = new Set<string>();
  return runRoleLoop(
    agora,
    {
      role: 'dialectic',
      categories: [DIALECTIC_SESSION_CATEGORY],
      types: ['ReviewerSelected', 'ThesisSubmitted', 'AntithesisSubmitted', 'SynthesisSubmitted', 'ResolutionProposed', 'ResolutionSigned'],
      async act(event) {
        const sessionId = (event.data as { sessionId: string }).sessionId;
        const session = await readAsParty(agora, 'GetDialecticSession', { sessionId }, event);
        if (!session || !session.awaiting.includes(agora.agentId as string)) return undefined;
        const key = `${sessionId}:${session.status}:${session.round}`;
        if (taken.has(key)) return undefined;
        let action: Action | undefined;
        if (session.status === 'awaiting_signatures' && session.proposed) {
          action = { type: 'SignResolution', payload: agora.signResolution(sessionId, session.proposed.payload as ResolutionPayload), key };
        } else {
          const kind = session.status === 'awaiting_thesis' ? 'thesis' : session.status === 'awaiting_antithesis' ? 'antithesis' : session.status === 'synthesis' ? 'synthesis' : undefined;
          if (kind === undefined) return undefined;
          const round = session.round + 1;
          const answer = await handler(kind === 'synthesis' ? { kind, round, session, event } : { kind, session, event });
          if (!answer) return undefined;
          const payload = { ...answer, sessionId, ...(kind === 'synthesis' ? { round } : {}) };
          action = { type: TURN_COMMAND[kind], payload, key } as Action;
        }
        taken.add(key);
        return [action];
      },
    },
    options,
  );
}

/**
 * A debater's turns in the debates it takes part in: after the debate opens and after each message
 * of its transcript (anyone's, the moderator's and its own included), the handler sees the debate
 * as it stands and answers with its next move on a thread, or undefined to wait. One move per
 * message at most: the command id is derived from the event.
 */
export function onDebateTurn(
  agora: Agora,
  handler: (turn: { debate: DebateView; event: AgoraEvent }) => Promise<{ move: DebateMove; threadId?: string } | undefined>,
  options: RoleLoopOptions = {},
): RoleLoop {
  return runRoleLoop(
    agora,
    {
      role: 'debater',
      categories: [DEBATE_CATEGORY],
      types: ['DebateOpened', 'DebateMessagePosted'],
      async act(event) {
        const debateId = (event.data as { debateId: string }).debateId;
        const debate = await readAsParty(agora, 'GetDebate', { debateId }, event);
        if (!debate || debate.status !== 'open' || !debate.participants.some((p) => p.agentId === agora.agentId)) return undefined;
        const next = await handler({ debate, event });
        // One move per state of the transcript: a repeat after a restart (or a second event seen before the move) is the same command.
        return next ? [{ type: 'PostDebateMove', payload: { debateId, threadId: next.threadId ?? 'main', move: next.move }, key: `${debateId}:${debate.messages.length}` }] : undefined;
      },
    },
    options,
  );
}
