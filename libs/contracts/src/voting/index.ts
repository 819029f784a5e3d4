import { contractsOf, queryOwner } from '../define.js';
import * as views from './views.js';
import * as voting from './voting.js';

export * from './vocabulary.js';
export * from './views.js';
export * from './voting.js';

/** Everything of the voting service, for the catalog and the voting session decider. */
export const votingContracts = contractsOf(voting, views);
export const votingCommands = votingContracts.commands;
/** Answered by the voting service; the figures are the projections service's. */
export const votingServiceQueries = votingContracts.queries.filter((q) => queryOwner(q) === 'voting');
