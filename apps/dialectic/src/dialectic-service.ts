import {
  AgoraError,
  authorizeSender,
  CreateVotingSession,
  DIALECTIC_SESSION_CATEGORY,
  dialecticCommands,
  dialecticServiceQueries,
  GetDialecticSession,
  ListDialecticSessions,
  RecordTieBreak,
  SubmitAntithesis,
  SubmitAudit,
  VOTING_SESSION_CATEGORY,
  type AgentPaused,
  type DataOf,
  type RecoveryEscalated,
  type RecoveryResolved,
  type PayloadOf,
  type RecordQuorumResult,
} from '@agora/contracts';
import {
  createDialecticDecider,
  DEFAULT_DIALECTIC_POLICY,
  deadlineOf,
  dialecticStreamId,
  parseQuorumVotingSessionId,
  parseSessionDeadlineKey,
  recoveryCandidatesFrom,
  type CandidateAgent,
  requireSignerKey,
  type DialecticCommand,
  type DialecticEvent,
  type DialecticPolicy,
  type DialecticSessionState,
} from '@agora/domain-dialectic';
import { seedFrom } from '@agora/domain-common';
import type { Decider } from '@agora/decider';
import { type EventSourcingLogger, type Scheduler } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import { createServiceMicroservice, onAgentCommands, onQuery, type ServiceMicroservice, type VerifiedCommand } from '@agora/messaging';
import { dialecticDrawFigures, dialecticSessionsTable, getDialecticSession, listDialecticSessions, readDialecticSession, readVotingSession } from '@agora/read-models';
import type { SqlProjectionRunner } from '@agora/read-store';
import { deciderHandler, KeyedLock, recordSettings, runDeadlines, runReactor, startAll, startTogether, type InternalCommand, serviceRequest, type Reaction, type RegistryDirectory, type Running, type ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';

export interface DialecticServiceOptions {
  /** Nest's logger setting; `false` silences it and the read model's, reactor's and scheduler's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** The rules a new recovery session records (deadlines, rounds, selection, escalation, hard limits). Default: the seed's. */
  policy?: DialecticPolicy;
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
}

/** What this service answers: every dialectic command, and the sessions queries (stats and collusion are the projections service's). */
export const dialecticServiceCatalog = { commands: [...dialecticCommands], queries: [...dialecticServiceQueries] };

/** The action type of the voting sessions a quorum escalation creates. */
export const QUORUM_ACTION_TYPE = 'resume_paused_agent';

export interface RunningDialectic extends Running {
  service: ServiceMicroservice;
  /** The sessions read model. */
  sessions: SqlProjectionRunner;
  /** The durable phase deadlines. */
  deadlines: Scheduler;
}

const silent: EventSourcingLogger = { warn: () => undefined };

/**
 * The registry's agents who may send `commandType` (the authorization table decides): a recovery's
 * reviewer, tie-breaker or auditor is drawn only from agents whose roles let them answer, never from
 * one (a debater-only agent, say) whose antithesis the gate would refuse.
 */
function agentsWhoMay(registry: Pick<RegistryDirectory, 'list'>, command: typeof SubmitAntithesis | typeof RecordTieBreak | typeof SubmitAudit) {
  return registry.list().filter((a) => authorizeSender(command, { actor: a.agentId, roles: a.roles }).allowed);
}

type SignedPayload = { sessionId: string; publicKey?: string | undefined };
type QuorumPayload = PayloadOf<typeof RecordQuorumResult>;

/**
 * The quorum's outcome as RecordQuorumResult records it, read from the voting session's own stream
 * (folded by the voting decider), never from a payload anyone asserts: RecordQuorumResult is
 * service-only, and its figures are the session's recorded recommendation and tally (or, after an
 * escalation, the operator's recorded decision). Undefined for any other event, a session no
 * quorum escalation made, or a session whose stream does not show that outcome.
 */
async function quorumResultOf(event: RecordedEvent, store: ServiceContext['store']): Promise<QuorumPayload | undefined> {
  if (event.type !== 'VotingSessionDecided' && event.type !== 'VotingSessionExpired' && event.type !== 'VotingEscalationResolved') return undefined;
  const votingSessionId = (event.data as { sessionId?: unknown }).sessionId;
  if (typeof votingSessionId !== 'string') return undefined;
  const quorum = parseQuorumVotingSessionId(votingSessionId);
  if (!quorum) return undefined;
  const session = await readVotingSession(store, votingSessionId);
  if (!session || session.tally === null || session.recommendation === null || (session.status !== 'decided' && session.status !== 'expired')) return undefined;
  const { votes, approve, deny } = session.tally;
  const base = { sessionId: quorum.sessionId, escalation: quorum.escalation, votingSessionId, votes, approve, deny };
  const reasonOf = (lines: readonly string[]) => (lines.join('; ') || 'no reasoning given').slice(0, 2000);
  if (event.type === 'VotingEscalationResolved') {
    if (session.resolution === null) return undefined;
    return { ...base, decision: session.resolution.decision, reason: reasonOf([`operator ${session.resolution.operator} decided ${session.resolution.decision}`, session.resolution.reason]) };
  }
  const how = session.status === 'expired' ? 'expired with partial votes' : 'decided';
  return { ...base, decision: session.recommendation.decision, reason: reasonOf([`voting session ${how}`, ...session.recommendation.reasoning]) };
}

/**
 * The dialectic service (seed 001): the recovery of an agent its circuit breaker paused, one
 * aggregate per pause (`dialectic_session-<agentId>-p<pause>`), decided by the pure decider of
 * @agora/domain-dialectic.
 * - The parties' commands (thesis, antithesis, synthesis, signatures, escalation requests, the
 *   tie-breaker's and the operator's decisions, the audit) come signed through the gate. A command
 *   carrying a resolution signature must name the actor's registered key (`bad_signature`
 *   otherwise) before the decider verifies the signature itself.
 * - A reactor (one checkpoint, "dialectic") answers the log: AgentPaused opens the recovery with
 *   the registry's agents as candidates and the session records as their history, seeded by the
 *   pause event's id (and records a relapse on the session that last resumed the agent);
 *   RecoveryEscalated to tie_break draws a tie-breaker; to quorum, it sends CreateVotingSession to
 *   the voting service, which alone writes voting sessions: signed as service:dialectic, through the
 *   voting service's gate, authorization table (the command's issuers) and reply cache, and decided
 *   there with the registry's validators and the configuration in force, as any CreateVotingSession;
 *   the voting session's end comes back as RecordQuorumResult; RecoveryResolved with the audit drawn
 *   assigns an auditor.
 * - Deadlines are durable: rebuilt from the log at start, ExpireDialecticPhase when one is due.
 * - Queries: one session, and sessions by agent, participant, awaited actor or status, all from one
 *   live read model (a command's reply waits until it holds the command).
 */
export async function startDialecticService(context: ServiceContext, options: DialecticServiceOptions = {}): Promise<RunningDialectic> {
  const logger: EventSourcingLogger = options.logger === false ? silent : new Logger('agora:dialectic');
  // Opening a recovery, drawing a tie-breaker or an auditor, recording a quorum's result or a
  // relapse, expiring a phase, putting a recovery to a vote: the service's own commands, signed
  // with its service key as service:dialectic.
  const identity = context.serviceIdentity('dialectic');
  const now = options.now ?? Date.now;
  const store = context.store;
  const policy = options.policy ?? DEFAULT_DIALECTIC_POLICY;
  // Recorded in the log (settings-dialectic) before the first decision under it: the audit decides under it.
  const settings = await recordSettings(context, 'dialectic', policy);
  const decider: Decider<DialecticCommand, DialecticEvent, DialecticSessionState> = createDialecticDecider(policy);
  const decide = deciderHandler({ store, decider, streamOf: (p: { sessionId: string }) => dialecticStreamId(p.sessionId), locks: new KeyedLock(), now });
  // A resolution signature proves something about the actor only under the actor's registered key.
  const decideSigned = async (verified: VerifiedCommand<SignedPayload>) => {
    const registered = await context.directory.get(verified.actor.agentId);
    requireSignerKey(verified.actor.agentId, verified.payload.publicKey, registered?.publicKey);
    return decide(verified);
  };

  let sessions: SqlProjectionRunner | undefined;
  const db = context.readSide.db;
  // A draw weighs the sessions as the tables hold them when the reactor draws (the commands that
  // changed them were answered, and so written, before the pause that asks for a draw: a draw weighs
  // every session decided before it). Waiting here for the table to reach the reactor's event could
  // wait on the very pass over the log that is to deliver the event to the table.
  const candidates = async (agents: readonly CandidateAgent[], agentId: string, now: string) => recoveryCandidatesFrom(agents, await dialecticDrawFigures(db, agentId, now), agentId).slice(0, 500);
  // One session and the list are answered from the same read model; a command's reply waits until it holds the command (commandsVisible).
  const session = async (sessionId: string) => {
    const found = await getDialecticSession(db, sessionId);
    if (!found) throw new AgoraError('not_found', `recovery session ${sessionId} does not exist`, { sessionId });
    return found;
  };
  const onSession = (sessionId: string, type: DialecticCommand['type'], payload: DialecticCommand['payload']): InternalCommand => ({ streamId: dialecticStreamId(sessionId), decider, type, payload });

  async function react(event: RecordedEvent): Promise<Reaction[]> {
    switch (event.type) {
      case 'AgentPaused': {
        const d = event.data as DataOf<typeof AgentPaused>;
        const commands: Reaction[] = [
          onSession(d.sessionId, 'OpenRecovery', {
            sessionId: d.sessionId,
            agentId: d.agentId,
            pause: d.pause,
            reason: d.reason.slice(0, 1000),
            risk: d.risk,
            health: d.health,
            threshold: d.threshold,
            tags: d.tags,
            pausedAt: d.pausedAt,
            seed: seedFrom(event.id),
            candidates: await candidates(agentsWhoMay(context.registry, SubmitAntithesis), d.agentId, d.pausedAt),
          }),
        ];
        if (d.previousResume) commands.push(onSession(d.previousResume.sessionId, 'RecordRelapse', { sessionId: d.previousResume.sessionId, pause: d.pause, risk: d.risk, pausedAt: d.pausedAt }));
        return commands;
      }
      case 'RecoveryEscalated': {
        const d = event.data as DataOf<typeof RecoveryEscalated>;
        if (d.tier === 'operator') return [];
        const s = await readDialecticSession(store, d.sessionId);
        if (!s) return [];
        if (d.tier === 'tie_break') {
          return [onSession(d.sessionId, 'AssignTieBreaker', { sessionId: d.sessionId, escalation: d.escalation, candidates: await candidates(agentsWhoMay(context.registry, RecordTieBreak), s.agentId, d.escalatedAt) })];
        }
        if (!d.votingSessionId || !d.proposal) return [];
        const conditions = d.proposal.conditions.map((c) => `${c.operation}(${JSON.stringify(c.parameters)})`).join(', ') || 'none';
        const timeout = Math.min(Math.max(s.rules.escalation.quorumTimeoutMs, 1000), 24 * 60 * 60_000);
        return [
          serviceRequest(CreateVotingSession, {
            requestId: d.votingSessionId,
            requestingAgent: s.agentId,
            actionType: QUORUM_ACTION_TYPE,
            riskLevel: 'high',
            critical: false,
            summary: `Resume ${s.agentId} (recovery ${s.sessionId}, escalation ${d.escalation}, ${d.reason})? Root cause: ${d.proposal.rootCause}. Conditions: ${conditions}`.slice(0, 5000),
            criteria: { minTrustScore: 0, excludeAgents: [s.agentId, ...(s.reviewer ? [s.reviewer] : [])], preferredSpecializations: [] },
            votingTimeoutMs: timeout,
          }),
        ];
      }
      case 'RecoveryResolved': {
        const d = event.data as DataOf<typeof RecoveryResolved>;
        if (!d.audit.sampled) return [];
        return [onSession(d.sessionId, 'AssignAuditor', { sessionId: d.sessionId, candidates: await candidates(agentsWhoMay(context.registry, SubmitAudit), d.agentId, d.resolvedAt) })];
      }
      case 'VotingSessionDecided':
      case 'VotingSessionExpired':
      case 'VotingEscalationResolved': {
        const result = await quorumResultOf(event, store);
        return result ? [onSession(result.sessionId, 'RecordQuorumResult', result)] : [];
      }
      default:
        return [];
    }
  }

  let deadlines: Scheduler | undefined;
  let service: ServiceMicroservice | undefined;
  // The read model, the reactor and the deadlines catch up together, in one pass over the log; the
  // service answers once they are up. The reactor reads the sessions model as of the event it handles.
  const running = await startAll([
    () =>
      startTogether([
        async () => {
          const part = await context.readSide.use(dialecticSessionsTable, logger);
          sessions = part.runner;
          return part;
        },
        () => runReactor(context, { name: 'dialectic', as: identity, categories: ['agent', DIALECTIC_SESSION_CATEGORY, VOTING_SESSION_CATEGORY], react, logger, now }),
        async () => {
          const part = await runDeadlines(context, {
            name: 'dialectic',
            as: identity,
            categories: [DIALECTIC_SESSION_CATEGORY],
            deadlineOf,
            expire(key, dueAt) {
              const parsed = parseSessionDeadlineKey(key);
              return parsed && onSession(parsed.sessionId, 'ExpireDialecticPhase', { sessionId: parsed.sessionId, deadlineAt: dueAt });
            },
            logger,
          });
          deadlines = part.scheduler;
          return part;
        },
      ]),
    async () => {
      service = await createServiceMicroservice({
        service: 'dialectic',
        ...context.transport,
        metadata: settings.metadata,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        commandsVisible: (position) => context.readModels.reached(position, [sessions!]),
        description: 'Agora dialectic: circuit-breaker recovery by thesis, antithesis and synthesis, signed resolutions, hard limits, and the escalation ladder (tie-break, quorum, operator)',
        catalog: dialecticServiceCatalog,
        // What agents send (the service-only commands it issues itself), a resolution's signature checked first.
        commands: new Map([
          ...onAgentCommands(
            dialecticCommands.filter((c) => c.signs === undefined),
            decide,
          ),
          ...onAgentCommands(
            dialecticCommands.filter((c) => c.signs === 'resolution'),
            decideSigned,
          ),
        ]),
        queries: new Map([
          onQuery(GetDialecticSession, ({ sessionId }) => session(sessionId)),
          onQuery(ListDialecticSessions, async (params) => {
            const { items, nextCursor } = await listDialecticSessions(db, params);
            return { sessions: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),
        ]),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      const started = service;
      return { close: () => started.close() };
    },
  ]);
  return {
    service: service!,
    sessions: sessions!,
    deadlines: deadlines!,
    lines: [`dialectic service ${service!.id}: agora.cmd.dialectic.session.*, ${dialecticServiceQueries.map((q) => q.subject).join(', ')}`, settings.line, ...(running.lines ?? [])],
    close: () => running.close(),
  };
}
