import { auditContracts } from './audit.js';
import { settingsContracts } from './settings.js';
import type { CommandDefinition, EventDefinition, QueryDefinition } from './define.js';
import { chamberContracts, chamberProjectionQueries } from './chamber-queries.js';
import { debateContracts } from './debate.js';
import { dialecticContracts, dialecticProjectionQueries } from './dialectic.js';
import { projectionsCommands } from './projections.js';
import { modelCallCommands, modelCallEvents, modelCallQueries } from './model-calls.js';
import { registryCommands, registryEvents, registryQueries } from './registry.js';
import { GetReviewerCalibration } from './tribunal-calibration.js';
import { GetTribunalStats, ListUnderCoveredProposals } from './tribunal-views.js';
import { tribunalContracts } from './tribunal.js';
import { votingContracts, votingProjectionQueries } from './voting.js';

/** Every command, event and query Agora speaks. Services and the generated documents read from here. */
export const commands: readonly CommandDefinition[] = [...registryCommands, ...tribunalContracts.commands, ...votingContracts.commands, ...dialecticContracts.commands, ...chamberContracts.commands, ...debateContracts.commands, ...projectionsCommands, ...auditContracts.commands, ...settingsContracts.commands, ...modelCallCommands];
export const events: readonly EventDefinition[] = [...registryEvents, ...tribunalContracts.events, ...votingContracts.events, ...dialecticContracts.events, ...chamberContracts.events, ...debateContracts.events, ...auditContracts.events, ...settingsContracts.events, ...modelCallEvents];
export const queries: readonly QueryDefinition[] = [...registryQueries, ...tribunalContracts.queries, ...votingContracts.queries, ...dialecticContracts.queries, ...chamberContracts.queries, ...debateContracts.queries, ...modelCallQueries];

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
 * tribunal's): the figures of the tribunal, voting, dialectic and chamber.
 */
export const projectionsQueries: readonly QueryDefinition[] = [GetTribunalStats, ListUnderCoveredProposals, GetReviewerCalibration, ...votingProjectionQueries, ...dialecticProjectionQueries, ...chamberProjectionQueries];

/** The commands and queries a service's process serves in its queue group (its NATS user may subscribe to these alone). */
export function servedBy(service: string): { commands: CommandDefinition[]; queries: QueryDefinition[] } {
  const projected = new Set(projectionsQueries);
  return { commands: commandsOf(service), queries: service === 'projections' ? [...projectionsQueries] : queriesOf(service).filter((q) => !projected.has(q)) };
}
