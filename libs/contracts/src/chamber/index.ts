import { contractsOf, queryOwner } from '../define.js';
import * as chamber from './chamber.js';
import * as queries from './queries.js';

export * from './chamber.js';
export * from './queries.js';

/** Everything of the chamber service, for the catalog and the chamber decider. */
export const chamberContracts = contractsOf(chamber, queries);
export const chamberCommands = chamberContracts.commands;
/** Answered by the chamber service; its figures are the projections service's. */
export const chamberServiceQueries = chamberContracts.queries.filter((q) => queryOwner(q) === 'chamber');
