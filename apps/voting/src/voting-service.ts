import {
  AgoraError,
  CreateVotingSession,
  GetVotingSession,
  GetVotingSessionByRequest,
  ListPendingVotingSessions,
  ListVotingSessions,
  ListValidators,
  UpdateVotingConfig,
  votingCommands,
  votingServiceQueries,
  type PayloadOf,
  type ValidatorCandidate,
  type VotingSessionView,
} from '@agora/contracts';
import {
  deadlineOf,
  parseSessionDeadlineKey,
  sessionIdOfRequest,
  tierOf,
  votingConfigDecider,
  votingConfigStreamId,
  votingSessionDecider,
  votingSessionStreamId,
  type SessionEnrichment,
  type VotingSessionCommand,
} from '@agora/domain-voting';
import { type EventSourcingLogger, type Scheduler } from '@agora/eventsourcing';
import { createServiceMicroservice, onAgentCommands, onCommand, onQuery, type CommandHandler, type ServiceMicroservice } from '@agora/messaging';
import { getVotingSession, listVotingSessions, pageOf, pendingVotingSessions, readVotingConfig, votingSessionsTable } from '@agora/read-models';
import type { SqlProjectionRunner } from '@agora/read-store';
import { deciderHandler, KeyedLock, runDeadlines, startAll, startTogether, type RegistryDirectory, type Running, type ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';

export interface VotingServiceOptions {
  /** Nest's logger setting; `false` silences it and the read model's and scheduler's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
}

/**
 * What this service answers: every voting command, and the session and validator queries. The
 * statistics and validator agreement queries (`agora.qry.voting.stats`, `...validators.agreement`)
 * are the projections service's, computed from its read model.
 */
export const votingServiceCatalog = { commands: [...votingCommands], queries: [...votingServiceQueries] };

export interface RunningVoting extends Running {
  service: ServiceMicroservice;
  /** The sessions read model (pending sessions). */
  sessions: SqlProjectionRunner;
  /** The durable timeouts. */
  deadlines: Scheduler;
}

const silent: EventSourcingLogger = { warn: () => undefined };

/** The registry's validators, as selection candidates: every agent with role validator (the decider keeps the active ones). */
export function validatorCandidates(registry: Pick<RegistryDirectory, 'list'>): ValidatorCandidate[] {
  return registry
    .list()
    .filter((a) => a.roles.includes('validator'))
    .map((a) => ({ agentId: a.agentId, displayName: a.displayName, trustScore: a.trustScore, specializations: [...a.specializations], status: a.status }));
}

/**
 * The voting service (seed 002): sessions on `voting_session-<requestId>` and the configuration on
 * `voting_config-global`, decided by the pure deciders of @agora/domain-voting.
 * - CreateVotingSession is enriched here: the registry's validators (this process's live agent
 *   directory) and the configuration in force (read from its stream) go to the decider, which
 *   selects the validators and records them and the rules in VotingSessionCreated.
 * - Votes, cancellations, operator decisions and configuration changes are decided as they come
 *   (load, fold, decide, append at the expected revision, retry on conflict); commands on one
 *   session queue up in a replica, and replicas in other processes meet optimistic concurrency.
 * - Timeouts are durable: every replica rebuilds the pending ones from the log at start; the one
 *   holding the lease `deadlines.voting` issues ExpireVotingSession when one is due, with a command
 *   id derived from the deadline, so it lands once whichever replica or restart fires it.
 * - Queries: one session, by request, pending sessions and lists, all from one live read model
 *   (a command's reply waits until it holds the command), and the validators the registry offers.
 */
export async function startVotingService(context: ServiceContext, options: VotingServiceOptions = {}): Promise<RunningVoting> {
  const logger: EventSourcingLogger = options.logger === false ? silent : new Logger('agora:voting');
  const now = options.now ?? Date.now;
  const locks = new KeyedLock();
  const store = context.store;
  const sessionStream = (p: { sessionId: string }) => votingSessionStreamId(p.sessionId);
  const decideOnSession = deciderHandler({ store, decider: votingSessionDecider, streamOf: sessionStream, locks, now });
  const decideConfig = deciderHandler({ store, decider: votingConfigDecider, streamOf: () => votingConfigStreamId(), locks, now });

  // CreateVotingSession is decided with what the service adds to it (the registry's validators and
  // the configuration in force), looked up per command before the decision and handed to the
  // handler's toCommand through this map.
  type CreatePayload = PayloadOf<typeof CreateVotingSession>;
  const enrichments = new WeakMap<object, SessionEnrichment>();
  const decideCreation = deciderHandler({
    store,
    decider: votingSessionDecider,
    streamOf: (p: CreatePayload) => votingSessionStreamId(sessionIdOfRequest(p.requestId)),
    toCommand: (verified, commandContext): VotingSessionCommand => {
      const enrichment = enrichments.get(verified);
      if (!enrichment) throw new Error('CreateVotingSession reached the decider without its validator candidates and configuration');
      return { type: 'CreateVotingSession', payload: { ...verified.payload, ...enrichment }, context: commandContext };
    },
    locks,
    now,
  });
  const createSession: CommandHandler<CreatePayload> = async (verified) => {
    const { config, revision } = await readVotingConfig(store);
    enrichments.set(verified, { candidates: validatorCandidates(context.registry), config, configRevision: revision });
    return decideCreation(verified);
  };

  // One session and the lists are answered from the same read model; a command's reply waits until it holds the command (commandsVisible).
  const sessionView = async (sessionId: string): Promise<VotingSessionView> => {
    const session = await getVotingSession(context.readSide.db, sessionId);
    if (!session) throw new AgoraError('not_found', `voting session ${sessionId} does not exist`, { sessionId });
    return session;
  };

  let sessions: SqlProjectionRunner | undefined;
  let deadlines: Scheduler | undefined;
  let service: ServiceMicroservice | undefined;
  // The read model and the deadlines catch up together, in one pass over the log; the service answers once they are up.
  const running = await startAll([
    () =>
      startTogether([
        async () => {
          const part = await context.readSide.use(votingSessionsTable, logger);
          sessions = part.runner;
          return part;
        },
        async () => {
          const part = await runDeadlines(context, {
            name: 'voting',
            as: context.serviceIdentity('voting'),
            categories: ['voting_session'],
            deadlineOf,
            expire(key) {
              const parsed = parseSessionDeadlineKey(key);
              if (!parsed) return undefined;
              return { streamId: votingSessionStreamId(parsed.sessionId), decider: votingSessionDecider, type: 'ExpireVotingSession', payload: { sessionId: parsed.sessionId } };
            },
            logger,
          });
          deadlines = part.scheduler;
          return part;
        },
      ]),
    async () => {
      // ListValidators reads the agent directory: not before it has caught up.
      await context.registry.caughtUp;
      service = await createServiceMicroservice({
        service: 'voting',
        ...context.transport,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        commandsVisible: (position) => context.readModels.reached(position, [sessions!]),
        description: 'Agora voting: the Bot Tribunal voting engine (validator votes on high-risk actions, consensus, recommendation, human escalation)',
        catalog: votingServiceCatalog,
        commands: new Map([
          ...onAgentCommands(
            votingCommands.filter((c) => c.aggregate === 'session' && c !== CreateVotingSession),
            decideOnSession,
          ),
          onCommand(CreateVotingSession, createSession),
          onCommand(UpdateVotingConfig, decideConfig),
        ]),
        queries: new Map([
          onQuery(GetVotingSession, ({ sessionId }) => sessionView(sessionId)),
          onQuery(GetVotingSessionByRequest, ({ requestId }) => sessionView(sessionIdOfRequest(requestId))),
          onQuery(ListPendingVotingSessions, async (params) => {
            const { items, nextCursor } = await pendingVotingSessions(context.readSide.db, params);
            return { sessions: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),
          onQuery(ListVotingSessions, async (params) => {
            const { items, nextCursor } = await listVotingSessions(context.readSide.db, params);
            return { sessions: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),
          onQuery(ListValidators, async ({ minTrustScore, limit, cursor }) => {
            const eligible = validatorCandidates(context.registry).filter((c) => c.status === 'active' && c.trustScore >= (minTrustScore ?? 0));
            const { items, nextCursor } = pageOf(eligible, { key: (c) => [c.trustScore, c.agentId], directions: ['desc', 'asc'] }, { limit, cursor }, ({ agentId, displayName, trustScore, specializations }) => ({
              agentId,
              displayName,
              trustScore,
              tier: tierOf(trustScore),
              specializations,
            }));
            return { validators: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
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
    lines: [`voting service ${service!.id}: agora.cmd.voting.*, ${votingServiceQueries.map((q) => q.subject).join(', ')}`, ...(running.lines ?? [])],
    close: () => running.close(),
  };
}
