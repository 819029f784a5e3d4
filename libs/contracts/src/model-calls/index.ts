import { contractsOf } from '../define.js';
import * as modelCalls from './model-calls.js';

export * from './model-calls.js';

/** Agents' model budgets and calls (the registry serves them). */
export const modelCallContracts = contractsOf(modelCalls);
