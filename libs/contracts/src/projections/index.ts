import { contractsOf } from '../define.js';
import * as projections from './projections.js';

export * from './projections.js';

/** The projections service's own commands (the queries it answers are the protocols', `servedBy: 'projections'`). */
export const projectionsContracts = contractsOf(projections);
