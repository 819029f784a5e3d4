import { AgoraError, commandsOf, GetProposal, ListProposals } from '@agora/contracts';
import { createProposalDecider, DEFAULT_TRIBUNAL_POLICY, proposalStreamId, type TribunalPolicy } from '@agora/domain-tribunal';
import { createServiceMicroservice, onAgentCommands, onQuery, type ServiceMicroservice } from '@agora/messaging';
import { getProposal, listProposals, proposalsTable } from '@agora/read-models';
import { deciderHandler, KeyedLock, recordSettings, type Running, type ServiceContext } from '@agora/runtime';
import type { LoggerService, LogLevel } from '@nestjs/common';

export interface ProposalServiceOptions {
  /** The tribunal's rules: read at submission and recorded in ProposalSubmitted. Default: DEFAULT_TRIBUNAL_POLICY. */
  policy?: TribunalPolicy;
  logger?: LoggerService | LogLevel[] | false;
}

/**
 * The proposal service: an executive submits, revises, withdraws and records the execution of its
 * proposals (the decider checks that only the proposer may), and reports their outcome (or an operator does). Every submission and revision asks
 * the tribunal for a review round (ReviewRoundRequested), which the tribunal service answers.
 */
export async function startProposalService(context: ServiceContext, options: ProposalServiceOptions = {}): Promise<Running & { service: ServiceMicroservice }> {
  const policy = options.policy ?? DEFAULT_TRIBUNAL_POLICY;
  // Recorded in the log (settings-tribunal) before the first decision under it: the audit decides under it.
  const settings = await recordSettings(context, 'tribunal', policy);
  const decide = deciderHandler({
    store: context.store,
    decider: createProposalDecider(policy),
    streamOf: (p: { proposalId: string }) => proposalStreamId(p.proposalId),
    locks: new KeyedLock(),
  });
  const proposals = await context.readSide.use(proposalsTable);
  const db = context.readSide.db;
  try {
    const service = await createServiceMicroservice({
      service: 'proposal',
      ...context.transport,
      metadata: settings.metadata,
      directory: context.directory,
      maxClockSkewMs: context.config.maxClockSkewMs,
      commandsVisible: (position) => context.readModels.reached(position, [proposals.runner]),
      description: 'Agora proposals: an executive proposes a plan or frame, revises it in answer to objections, withdraws it, records its execution',
      commands: new Map(onAgentCommands(commandsOf('proposal'), decide)),
      queries: new Map([
        // One proposal and the list are answered from the same read model; a command's reply waits until it holds the command (commandsVisible).
        onQuery(GetProposal, async ({ proposalId }) => {
          const proposal = await getProposal(db, proposalId);
          if (!proposal) throw new AgoraError('not_found', `no proposal "${proposalId}"`, { proposalId });
          return proposal;
        }),
        onQuery(ListProposals, async (params) => {
          const { items, nextCursor } = await listProposals(db, params);
          return { proposals: items, ...(nextCursor === undefined ? {} : { nextCursor }) };
        }),
      ]),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    return {
      service,
      lines: [`proposal service ${service.id}: agora.cmd.proposal.proposal.*, agora.qry.proposal.*`, settings.line],
      async close() {
        await service.close();
        await proposals.close();
      },
    };
  } catch (error) {
    await proposals.close();
    throw error;
  }
}
