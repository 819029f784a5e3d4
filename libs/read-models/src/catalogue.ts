import type { SqlProjection } from '@agora/read-store';
import { chamberLedgersTable, chamberRecordsTable, chamberSessionsTable } from './chamber.js';
import { debatesTable } from './debate.js';
import { dialecticSessionsTable } from './dialectic.js';
import { proposalsTable } from './proposals.js';
import { votingSessionsTable } from './voting.js';

/** Every read model kept in tables, by the name its row in `agora_read_models` carries: what `agora verify-read-models` checks and `agora projections rebuild` rebuilds. */
export const READ_MODEL_TABLES: readonly SqlProjection[] = [proposalsTable, votingSessionsTable, dialecticSessionsTable, chamberSessionsTable, chamberRecordsTable, chamberLedgersTable, debatesTable];
