import { contractsOf } from '../define.js';
import * as audit from './audit.js';

export * from './audit.js';

/** The log's checkpoints. */
export const auditContracts = contractsOf(audit);
