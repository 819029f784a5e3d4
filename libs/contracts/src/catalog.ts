import { auditContracts } from './audit/index.js';
import { chamberContracts } from './chamber/index.js';
import { debateContracts } from './debate/index.js';
import { isServiceOnly, queryOwner, SERVICE_NAMES, type CommandDefinition, type Contracts, type EventDefinition, type QueryDefinition } from './define.js';
import { dialecticContracts } from './dialectic/index.js';
import { modelCallContracts } from './model-calls/index.js';
import { projectionsContracts } from './projections/index.js';
import { registryContracts } from './registry/index.js';
import { settingsContracts } from './settings/index.js';
import { tribunalContracts } from './tribunal/index.js';
import { votingContracts } from './voting/index.js';

/** Agora's protocols, each from its folder (`<protocol>/index.ts` lists what its modules declare). */
export const protocols: readonly Contracts[] = [registryContracts, tribunalContracts, votingContracts, dialecticContracts, chamberContracts, debateContracts, projectionsContracts, auditContracts, settingsContracts, modelCallContracts];

/** Every command, event and query Agora speaks. Services and the generated documents read from here. */
export const commands: readonly CommandDefinition[] = protocols.flatMap((p) => p.commands);
export const events: readonly EventDefinition[] = protocols.flatMap((p) => p.events);
export const queries: readonly QueryDefinition[] = protocols.flatMap((p) => p.queries);

function indexBy<T, K extends keyof T>(items: readonly T[], key: K, what: string): Map<T[K], T> {
  const map = new Map<T[K], T>();
  for (const item of items) {
    if (map.has(item[key])) throw new Error(`two ${what} share ${String(key)} ${String(item[key])}`);
    map.set(item[key], item);
  }
  return map;
}

const commandsByType = indexBy(commands, 'type', 'commands');
const commandsBySubject = indexBy(commands, 'subject', 'commands');
const eventsByType = indexBy(events, 'type', 'events');
const queriesBySubject = indexBy(queries, 'subject', 'queries');

export const commandByType = (type: string): CommandDefinition | undefined => commandsByType.get(type);
export const commandBySubject = (subject: string): CommandDefinition | undefined => commandsBySubject.get(subject);
export const eventByType = (type: string): EventDefinition | undefined => eventsByType.get(type);
export const queryBySubject = (subject: string): QueryDefinition | undefined => queriesBySubject.get(subject);
export const commandsOf = (service: string): CommandDefinition[] => commands.filter((c) => c.service === service);
export const queriesOf = (service: string): QueryDefinition[] => queries.filter((q) => q.service === service);

/**
 * The queries the projections service answers from its read models, whichever protocol's subject
 * they are on (`agora.qry.tribunal.stats` is served in the projections' queue group, not the
 * tribunal's): those whose definition says `servedBy: 'projections'`.
 */
export const projectionsQueries: readonly QueryDefinition[] = queries.filter((q) => q.servedBy === 'projections');

/** The commands and queries a service's process serves in its queue group (its NATS user may subscribe to these alone). */
export function servedBy(service: string): { commands: CommandDefinition[]; queries: QueryDefinition[] } {
  return { commands: commandsOf(service), queries: queries.filter((q) => queryOwner(q) === service) };
}

const subjects = (defs: readonly { subject: string }[]): string => defs.map((d) => `\`${d.subject}\``).join(', ');

/** Each service's subjects: the commands agents send it, those it issues itself, the queries its queue group answers (docs/subjects.md's table is generated from this). */
export function subjectsTableMarkdown(): string {
  const lines = ['| service | commands | issued by the service itself (service-only) | queries |', '| --- | --- | --- | --- |'];
  for (const service of SERVICE_NAMES) {
    const served = servedBy(service);
    lines.push(`| ${service} | ${subjects(served.commands.filter((c) => !isServiceOnly(c)))} | ${subjects(served.commands.filter(isServiceOnly))} | ${subjects(served.queries)} |`);
  }
  return `${lines.join('\n')}\n`;
}
