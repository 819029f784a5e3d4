import {
  ListAssignments,
  tribunalCommands,
  type DataOf,
  type ReviewRoundRequested,
} from '@agora/contracts';
import { deadlineOf, parseRoundDeadlineKey, proposalDecider, proposalStreamId } from '@agora/domain-tribunal';
import { createServiceMicroservice, onAgentCommands, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { assignmentsOf, proposalsTable } from '@agora/read-models';
import { deciderHandler, KeyedLock, runDeadlines, runReactor, startAll, startTogether, type InternalCommand, type Running, type ServiceContext } from '@agora/runtime';
import type { SqlProjectionRunner } from '@agora/read-store';
import type { LoggerService, LogLevel } from '@nestjs/common';

export interface TribunalServiceOptions {
  logger?: LoggerService | LogLevel[] | false;
}

/** The reviewer candidates for a round: every agent the registry knows with the reviewer role. */
function reviewerCandidates(context: ServiceContext) {
  return context.registry
    .list()
    .filter((agent) => agent.roles.includes('reviewer'))
    .map((agent) => ({ agentId: agent.agentId, constitutions: agent.constitutions, trustScore: agent.trustScore, status: agent.status }));
}

/**
 * The tribunal service: reviews and objections from reviewers, escalation decisions from
 * operators; it opens every requested round with the reviewers the registry has at that moment
 * (a reactor on ReviewRoundRequested, the selection recorded in the event), and closes each round
 * at its deadline (durable: rebuilt from the log at start), recording silence as deemed approval.
 * The tribunal figures (stats, coverage) are served by the projections service.
 */
export async function startTribunalService(context: ServiceContext, options: TribunalServiceOptions = {}): Promise<Running & { service: ServiceMicroservice }> {
  // Opening and expiring rounds are the tribunal's own commands, signed with its service key.
  const identity = context.serviceIdentity('tribunal');
  const decide = deciderHandler({ store: context.store, decider: proposalDecider, streamOf: (p: { proposalId: string }) => proposalStreamId(p.proposalId), locks: new KeyedLock() });
  let proposals: SqlProjectionRunner | undefined;
  let service: ServiceMicroservice | undefined;
  // The read model, the reactor and the deadlines catch up together, in one pass over the log; the
  // service answers once they are up. The reactor reads the agent directory as of the event it handles.
  const running = await startAll([
    () =>
      startTogether([
        async () => {
          const part = await context.readSide.use(proposalsTable);
          proposals = part.runner;
          return part;
        },
        () =>
          runReactor(context, {
            name: 'tribunal-rounds',
            as: identity,
            categories: ['proposal'],
            // One proposal's round does not wait on another's: rounds keep up with proposals submitted concurrently.
            concurrency: 16,
            react(event): InternalCommand[] {
              if (event.type !== 'ReviewRoundRequested') return [];
              const { proposalId, round } = event.data as DataOf<typeof ReviewRoundRequested>;
              return [{ streamId: proposalStreamId(proposalId), decider: proposalDecider, type: 'OpenReviewRound', payload: { proposalId, round, candidates: reviewerCandidates(context) } }];
            },
          }),
        () =>
          runDeadlines(context, {
            name: 'tribunal-rounds',
            as: identity,
            categories: ['proposal'],
            deadlineOf,
            expire(key) {
              const round = parseRoundDeadlineKey(key);
              return round && { streamId: proposalStreamId(round.proposalId), decider: proposalDecider, type: 'ExpireReviewRound', payload: round };
            },
          }),
      ]),
    async () => {
      service = await createServiceMicroservice({
        service: 'tribunal',
        ...context.transport,
        directory: context.directory,
        maxClockSkewMs: context.config.maxClockSkewMs,
        // A review's reply waits until the proposals model the assignments are read from holds it.
        commandsVisible: (position) => context.readModels.reached(position, [proposals!]),
        description: 'Agora tribunal: review rounds by orthogonal constitutions, objections, time-boxes and escalations to a human',
        catalog: { commands: tribunalCommands, queries: [ListAssignments] },
        commands: new Map(onAgentCommands(tribunalCommands, decide)),
        queries: new Map([onQuery(ListAssignments, async ({ reviewer, include, limit, cursor }) => {
            const { items, nextCursor } = await assignmentsOf(context.readSide.db, reviewer, include ?? 'pending', { limit, cursor });
            return { assignments: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
          }),]),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      const started = service;
      return { lines: [`tribunal service ${started.id}: agora.cmd.tribunal.proposal.*, agora.qry.tribunal.assignments`], close: () => started.close() };
    },
  ]);
  return { ...running, service: service! };
}
