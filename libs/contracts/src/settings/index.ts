import { contractsOf } from '../define.js';
import * as settings from './settings.js';

export * from './settings.js';

/** The settings the services decide under, as the log records them. */
export const settingsContracts = contractsOf(settings);
