import { PostgresReadDatabase } from './postgres.js';
import { SqliteReadDatabase } from './sqlite.js';
import type { ReadDatabase, ReadDatabaseConfig } from './database.js';

/** Opens the read side's database a config names (PostgreSQL: checked to answer). */
export async function openReadDatabase(config: ReadDatabaseConfig, options: { applicationName?: string } = {}): Promise<ReadDatabase> {
  if (config.engine === 'postgres') return PostgresReadDatabase.open(config.url, options);
  return new SqliteReadDatabase(config.file);
}
