import { queries } from './catalog.js';
import { access, type QueryAccess } from './define.js';

/**
 * Who may read what (the visibility table of docs/security.md is this data), beside the authorization table
 * for commands. Operators and auditors read everything. An agent reads what concerns it: the
 * public directory of agents, the aggregate figures, and the sessions, proposals and debates it is
 * a party to. An observer reads the figures and, on the event stream, every event's metadata
 * without its data. The service answering a query applies it (for a read token's reader, or the
 * reader the gateway names), the gateway to its event streams; a refusal is `forbidden` and says
 * the same whether the thing exists or not.
 */

/** A row of the table: a query by its subject's name (`<service>.<name>`), and what agents and observers may read of it. */
export interface QueryVisibility {
  query: string;
  agent: QueryAccess;
  observer: QueryAccess;
}

const { all, none, party } = access;

/** Every query of the catalog, with what an agent and an observer may read of it (its definition's `visibility`; operators and auditors: everything). */
export const QUERY_VISIBILITY: readonly QueryVisibility[] = queries.map((q) => ({ query: `${q.service}.${q.name}`, ...(q.visibility ?? { agent: none, observer: none }) }));

/** What an agent may read of a stream category's events (observers: the metadata of every event, never its data). */
export type EventAccess = { read: 'all' } | { read: 'none' } | { read: 'party'; fields: readonly string[] };

/**
 * Stream categories and what an agent reads of their events: `party` when it is named, in any
 * event of the stream, at one of `fields` of the event's data, or is the actor of one of them
 * (then every event of that stream: a reviewer assigned later reads the proposal it reviews). A
 * category not in the table is read by operators and auditors only.
 */
export const EVENT_VISIBILITY: Readonly<Record<string, EventAccess>> = {
  agent: all,
  proposal: party('proposer', 'reviewer', 'assignments.reviewer', 'executive'),
  voting_session: party('requestingAgent', 'createdBy', 'validators.agentId', 'validator'),
  voting_config: none,
  dialectic_session: party('agentId', 'reviewer', 'author', 'signer', 'tieBreaker', 'auditor'),
  chamber_session: party('proposedBy'),
  chamber_budget: none,
  debate: party('openedBy', 'participants.agentId', 'agentId', 'author'),
  audit: none,
  // The settings the services decide under: every agent may read the rules it is decided by.
  settings: all,
  model_calls: party('agentId'),
};

/** Roles that read everything. */
export const READ_ALL_ROLES: readonly string[] = ['operator', 'auditor'];

/** Who reads, as the visibility table sees it: from its registered roles. */
export interface Reader {
  agentId: string;
  /** Operator or auditor: reads everything. */
  readsAll: boolean;
  /** Reads as an agent (what concerns it): any role but observer, or none. */
  asAgent: boolean;
  /** Reads as an observer (figures, event metadata). */
  asObserver: boolean;
}

export function readerOf(agentId: string, roles: readonly string[]): Reader {
  const readsAll = roles.some((r) => READ_ALL_ROLES.includes(r));
  const asObserver = roles.includes('observer');
  return { agentId, readsAll, asAgent: !readsAll && (roles.length === 0 || roles.some((r) => r !== 'observer')), asObserver: !readsAll && asObserver };
}

const byQuery = new Map(QUERY_VISIBILITY.map((row) => [row.query, row]));

/** What this reader may read of a query (by `<service>.<name>`): a query not in the table is read by operators and auditors only. */
export function queryAccess(reader: Reader, query: string): QueryAccess {
  if (reader.readsAll) return all;
  const row = byQuery.get(query);
  if (row === undefined) return none;
  if (reader.asObserver && row.observer.read === 'all') return all;
  return reader.asAgent ? row.agent : none;
}

/** Every value found at a dot path (arrays are looked into at every step). */
export function valuesAt(value: unknown, path: string): unknown[] {
  let current: unknown[] = [value];
  for (const key of path.split('.')) {
    const next: unknown[] = [];
    for (const item of current.flatMap((v) => (Array.isArray(v) ? v : [v]))) {
      if (item !== null && typeof item === 'object' && Object.hasOwn(item, key)) next.push((item as Record<string, unknown>)[key]);
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** Agent ids named at any of `fields` of `value`. */
export function namedAt(value: unknown, fields: readonly string[]): Set<string> {
  return new Set(fields.flatMap((f) => valuesAt(value, f)).filter((v): v is string => typeof v === 'string'));
}

/** The agents a stream concerns (EVENT_VISIBILITY `party`): those named at `fields` in the data of any of its events, and the actors of its events. */
export function partiesOfEvents(fields: readonly string[], events: readonly { data: unknown; metadata?: Record<string, unknown> }[]): Set<string> {
  const parties = new Set<string>();
  for (const event of events) {
    for (const id of namedAt(event.data, fields)) parties.add(id);
    const actor = event.metadata?.['actor'];
    if (typeof actor === 'string') parties.add(actor);
  }
  return parties;
}

/** Whether this reader reads every event of a stream of this category without looking at the stream (operators, auditors; agents for categories read in full). */
export function readsCategory(reader: Reader, category: string): boolean {
  return reader.readsAll || (reader.asAgent && EVENT_VISIBILITY[category]?.read === 'all');
}

/** Whether this reader reads the events of a stream of this category that holds these events (as `GET /v1/events` shows them in full). */
export function readsStream(reader: Reader, category: string, events: readonly { data: unknown; metadata?: Record<string, unknown> }[]): boolean {
  if (readsCategory(reader, category)) return true;
  const access = EVENT_VISIBILITY[category];
  return reader.asAgent && access?.read === 'party' && partiesOfEvents(access.fields, events).has(reader.agentId);
}

const describeAccess = (a: QueryAccess | EventAccess): string =>
  a.read === 'all' ? 'all' : a.read === 'none' ? '**none**' : a.read === 'own' ? `its own (\`${a.param}\` = itself)` : `as a party (${a.fields.map((f) => `\`${f}\``).join(', ')})`;

/** The visibility table as Markdown (docs/security.md's copy is generated from this). */
export function visibilityTableMarkdown(): string {
  const routes = new Map(queries.map((q) => [`${q.service}.${q.name}`, `GET /v1/${q.service}/${q.httpPath}`]));
  const lines = ['| query | route | operator, auditor | agent | observer |', '| --- | --- | --- | --- | --- |'];
  for (const row of QUERY_VISIBILITY) lines.push(`| \`${row.query}\` | \`${routes.get(row.query) ?? ''}\` | all | ${describeAccess(row.agent)} | ${describeAccess(row.observer)} |`);
  lines.push('', '| events of the category (`GET /v1/events`) | operator, auditor | agent | observer |', '| --- | --- | --- | --- |');
  for (const [category, access] of Object.entries(EVENT_VISIBILITY)) lines.push(`| \`${category}\` | all | ${describeAccess(access)}${access.read === 'party' ? ' or the actor of one of its events' : ''} | metadata only |`);
  lines.push('| any other | all | **none** | metadata only |');
  return `${lines.join('\n')}\n`;
}
