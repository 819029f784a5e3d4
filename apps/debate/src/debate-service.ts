import { AgoraError, DEBATE_CATEGORY, debateCommands, debateQueries, GetDebate, ListDebates, OpenDebate, PostDebateMove, type DebateView, type PayloadOf } from '@agora/contracts';
import { debateDecider, debateStreamId, moderatorMovesFor } from '@agora/domain-debate';
import { type EventSourcingLogger } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import { createServiceMicroservice, onCommand, onQuery, type CommandHandler, type ServiceMicroservice } from '@agora/messaging';
import { debatesTable, getDebate, listDebates } from '@agora/read-models';
import type { SqlProjectionRunner } from '@agora/read-store';
import { deciderHandler, KeyedLock, runReactor, startAll, startTogether, type InternalCommand, type Running, type ServiceContext } from '@agora/runtime';
import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';

export interface DebateServiceOptions {
  /** Nest's logger setting; `false` silences it and the read model's and moderator's warnings (tests). */
  logger?: LoggerService | LogLevel[] | false;
  /** Service clock for `context.now`. Default Date.now. */
  now?: () => number;
}

/**
 * What this service answers on the transport: OpenDebate, PostDebateMove and the debate queries;
 * ModerateDebate is service-only (the gate answers an agent's `service_only`): the moderator issues
 * it as `service:debate`, signed with the service's key (context.serviceIdentity('debate')).
 */
export const debateServiceCatalog = { commands: [...debateCommands], queries: [...debateQueries] };

export interface RunningDebate extends Running {
  service: ServiceMicroservice;
  debates: SqlProjectionRunner;
}

const silent: EventSourcingLogger = { warn: () => undefined };

/**
 * The moderator's reaction to an event of a debate: ModerateDebate commands on the same debate,
 * decided by the debate decider (which says nothing when there is nothing to say).
 */
export function moderatorCommands(event: Pick<RecordedEvent, 'type' | 'data'>): InternalCommand[] {
  const debateId = (event.data as { debateId?: string }).debateId;
  if (typeof debateId !== 'string') return [];
  return moderatorMovesFor(event).map(({ threadId, move }) => ({
    streamId: debateStreamId(debateId),
    decider: debateDecider,
    type: 'ModerateDebate',
    payload: { debateId, threadId, intervention: move },
  }));
}

/**
 * The debate service (seed 004): debates on `debate-<debateId>`, decided by the pure decider of
 * @agora/domain-debate.
 * - OpenDebate: every participant must be a registered agent with the role `debater`.
 * - PostDebateMove: a debater's signed move, decided as it comes (stage gates, steelman, lock,
 *   crystallization happen inside the decision of the move that triggers them).
 * - The moderator is a reactor (`debate-moderator`, checkpointed): after a failed lock, a
 *   debater message in DISCOVERY or EVIDENCE, or a falsifier, it issues ModerateDebate as the
 *   service, with a command id derived from the event, so a redelivery or a restart adds nothing.
 * - Queries: one debate and the list, both from one live read model (a command's reply waits until it holds the command).
 */
export async function startDebateService(context: ServiceContext, options: DebateServiceOptions = {}): Promise<RunningDebate> {
  const logger: EventSourcingLogger = options.logger === false ? silent : new Logger('agora:debate');
  const now = options.now ?? Date.now;
  const locks = new KeyedLock();
  const store = context.store;
  const decideOnDebate = deciderHandler({ store, decider: debateDecider, streamOf: (p: { debateId: string }) => debateStreamId(p.debateId), locks, now });

  const openDebate: CommandHandler<PayloadOf<typeof OpenDebate>> = async (verified) => {
    const notDebaters: string[] = [];
    for (const { agentId } of verified.payload.participants) {
      const agent = await context.registry.agent(agentId);
      if (!agent || !agent.roles.includes('debater')) notDebaters.push(agent ? `${agentId} (roles: ${agent.roles.join(', ')})` : `${agentId} (not registered)`);
    }
    if (notDebaters.length > 0) {
      throw new AgoraError('invalid_command', `every participant must be a registered agent with the role debater: ${notDebaters.join('; ')}`, { participants: notDebaters });
    }
    return decideOnDebate(verified);
  };

  // One debate and the list are answered from the same read model; a command's reply waits until it holds the command (commandsVisible).
  const debateView = async (debateId: string): Promise<DebateView> => {
    const debate = await getDebate(context.readSide.db, debateId);
    if (!debate) throw new AgoraError('not_found', `debate ${debateId} does not exist`, { debateId });
    return debate;
  };

  let debates: SqlProjectionRunner | undefined;
  let service: ServiceMicroservice | undefined;
  // The read model and the moderator catch up together, in one pass over the log; the service answers once they are up.
  const running = await startAll([
    () =>
      startTogether([
        async () => {
          const part = await context.readSide.use(debatesTable, logger);
          debates = part.runner;
          return part;
        },
        () => runReactor(context, { name: 'debate-moderator', as: context.serviceIdentity('debate'), categories: [DEBATE_CATEGORY], react: moderatorCommands, logger, now }),
      ]),
    async () => {
      service = await createServiceMicroservice({
        service: 'debate',
        ...context.transport,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        commandsVisible: (position) => context.readModels.reached(position, [debates!]),
        description: 'Agora debate: crux discovery between debaters (stage gates, steelman before challenge, structured falsifiers, crux lock, moderator, crystallization)',
        catalog: debateServiceCatalog,
        commands: new Map([onCommand(OpenDebate, openDebate), onCommand(PostDebateMove, decideOnDebate)]),
        queries: new Map([
          onQuery(GetDebate, ({ debateId }) => debateView(debateId)),
          onQuery(ListDebates, async (params) => {
            const { items, nextCursor } = await listDebates(context.readSide.db, params);
            return { debates: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
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
    debates: debates!,
    lines: [`debate service ${service!.id}: agora.cmd.debate.debate.open|move, ${debateQueries.map((q) => q.subject).join(', ')}`, ...(running.lines ?? [])],
    close: () => running.close(),
  };
}
