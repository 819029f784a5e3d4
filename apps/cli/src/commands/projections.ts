import { describeStore, openEventStore } from '@agora/eventstore';
import { READ_MODEL_TABLES } from '@agora/read-models';
import { openReadDatabase, READ_DB_HELP, rebuildSqlProjections, type RebuildProgress, type RebuildResult } from '@agora/read-store';
import { ConfigError, readDatabaseOf, readRuntimeConfig } from '@agora/runtime';
import { CommandFailed, EXIT, flag, UsageError, type CommandSpec } from '../command.js';

const NAMES = READ_MODEL_TABLES.map((p) => p.name);

const ENV_HELP = `EVENT_STORE                the log: embedded, embedded:<dir>, jetstream[://host:port][?stream=..&prefix=..],
                           kurrentdb://... (as the services take it; default embedded under AGORA_DATA_DIR;
                           an embedded log is read beside the process that writes it)
AGORA_DATA_DIR             data directory (default ./data)
NATS_URL, NATS_USER, NATS_PASSWORD
                           the jetstream store's server and user
${READ_DB_HELP}`;

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** `[proposals] fold: 45,000 of 101,328 events (12,000/s, about 5 s left)` */
function progressLine(p: RebuildProgress): string {
  const of = p.total === undefined ? '' : ` of ${count(p.total)}`;
  const left = p.phase === 'fold' && p.secondsLeft !== undefined ? `, about ${Math.ceil(p.secondsLeft)} s left` : '';
  return `[${p.name}] ${p.phase}: ${count(p.events)}${of} events (${count(p.perSecond)}/s${left})\n`;
}

function resultLine(r: RebuildResult): string {
  // The read model's own table first (a projection lists its tables in the order to drop them, its own last).
  const rows = Object.entries(r.rows)
    .reverse()
    .map(([table, n]) => `${table} ${count(n)}`)
    .join(', ');
  return `rebuilt ${r.name} (version ${r.version}): ${count(r.events)} events read, ${count(r.applied)} of its own, in ${(r.foldMs / 1000).toFixed(1)} s; switched in ${(r.switchMs / 1000).toFixed(2)} s (${rows}), at position ${r.position ?? 'none'}\n`;
}

export const projectionsRebuild: CommandSpec = {
  name: 'projections rebuild',
  brief: 'build read models again from the log beside the live ones and switch to them, with no downtime',
  summary: "Fold the whole log again into tables beside a read model's live ones, catch up, and put the rebuilt rows in place of the live ones in one transaction.",
  usage: '[<name>...] [--json]',
  description: [
    'The services go on writing and answering meanwhile: the fold reads the log (EVENT_STORE) once, for every',
    "read model named, into scratch databases; then each is switched in turn. A switch, one transaction of",
    "the read side's database (AGORA_READ_DB) that holds the read model's position, folds what was appended",
    'since, replaces the live rows and moves the position, so the queries read the old rows until it',
    'commits and the writer goes on after it. Progress (events, rate,',
    'time left) goes to stderr every 2 s. Use it when `agora verify-read-models` finds a read model that',
    'differs from its rebuild; a release that changes a read model gives it a new version instead, whose',
    'tables every process fills from the log at start. Exit code 0 once every named read model is switched.',
    '',
    `Read models: ${NAMES.join(', ')}.`,
    '',
    `Environment:\n${ENV_HELP.replace(/^/gm, '  ')}`,
  ].join('\n'),
  options: {
    json: { type: 'boolean', description: 'print each result as a line of JSON' },
  },
  positionals: [{ name: 'name', required: false, rest: true, description: `read models to rebuild (default: every one): ${NAMES.join(', ')}` }],
  examples: ['agora projections rebuild', 'agora projections rebuild proposals debates', 'EVENT_STORE=jetstream://nats:4222 AGORA_READ_DB=postgres://agora@db:5432/agora agora projections rebuild'],
  async run(args, io) {
    const unknown = args.positionals.filter((name) => !NAMES.includes(name));
    if (unknown.length > 0) throw new UsageError(`no read model ${unknown.map((n) => JSON.stringify(n)).join(', ')}: one of ${NAMES.join(', ')}`, 'projections rebuild');
    const chosen = args.positionals.length === 0 ? READ_MODEL_TABLES : READ_MODEL_TABLES.filter((p) => args.positionals.includes(p.name));
    let config;
    try {
      config = readRuntimeConfig(io.env as NodeJS.ProcessEnv, { natsByDefault: false });
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message, 'projections rebuild');
      throw error;
    }
    const json = flag(args, 'json');
    // Never written here: an embedded log is read beside the process that writes it.
    const store = await openEventStore({ ...config.store, readOnly: true });
    try {
      const db = await openReadDatabase(readDatabaseOf(config));
      try {
        io.stderr(`projections rebuild: ${chosen.length} read model${chosen.length === 1 ? '' : 's'} from ${describeStore(config.store)} into ${db.describe()}\n`);
        // One pass over the log folds them all; then each is switched in turn.
        const switched: string[] = [];
        try {
          await rebuildSqlProjections(db, store, chosen, {
            progress: (p) => io.stderr(progressLine(p)),
            switched: (result) => {
              switched.push(result.name);
              io.stdout(json ? `${JSON.stringify(result)}\n` : resultLine(result));
            },
          });
        } catch (error) {
          const left = chosen.map((p) => p.name).filter((name) => !switched.includes(name));
          throw new CommandFailed(undefined, `rebuilding ${left.join(', ')}: ${(error as Error).message} (their live rows are as they were${switched.length > 0 ? `; ${switched.join(', ')} rebuilt and switched before it` : ''})`);
        }
      } finally {
        await db.close();
      }
    } finally {
      await store.close();
    }
    return EXIT.ok;
  },
};
