import { contractsOf } from '../define.js';
import * as agents from './agents.js';

export * from './agents.js';

/** The registry's agents: registration, roles, keys, trust (the breaker's commands are the dialectic protocol's). */
export const registryContracts = contractsOf(agents);
