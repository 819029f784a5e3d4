import type { z } from 'zod';
import type { Role } from './common.js';
import { checkVersioning, type EventUpcaster } from './versions.js';

/** Subjects: lowercase, dot-separated, no wildcards. */
const TOKEN = /^[a-z][a-z0-9_]*$/;

/**
 * A command's contract. `T`, `S` and `A` keep its type, service and aggregate as written, so that a
 * decider's command union is derived from the definitions (`CommandsOf` in @agora/decider).
 */
export interface CommandDefinition<P extends z.ZodType = z.ZodType, T extends string = string, S extends string = string, A extends string = string> {
  kind: 'command';
  type: T;
  service: S;
  aggregate: A;
  verb: string;
  /** `agora.cmd.<service>.<aggregate>.<verb>` */
  subject: string;
  payload: P;
  /**
   * The agent roles that may send it (the actor needs at least one). Empty for a service-only
   * command: one that only the services in `issuers` issue, on their own behalf.
   */
  roles: readonly Role[];
  /**
   * Services that issue this command on their own behalf (a reaction, a deadline), signed with
   * their service key as `service:<name>` (see `serviceActorId`). With `roles: []` the command is
   * service-only: the command gate refuses it from anyone (`service_only`), and only these
   * services' own signed envelopes may carry it into the log.
   */
  issuers?: readonly ServiceName[];
  /**
   * Who among the holders of those roles may send it, relative to the aggregate, enforced by the
   * decider (e.g. "the reviewer assigned in this round"). Absent: any holder of the roles.
   */
  relation?: string;
  /**
   * The roles that could send it before a change of rules (RULES_VERSION of @agora/decider): a
   * command decided under rules below `rules` is authorized with these, so that an older log audits
   * as it was decided. The live gate always applies `roles`.
   */
  rolesBefore?: { rules: number; roles: readonly Role[] };
  /**
   * A signature of its own the payload carries besides the envelope's (`publicKey`, `signature`),
   * under this SIGNING_TAGS tag: `resolution`, a party's signature of a dialectic resolution. The
   * service checks that `publicKey` is the actor's registered key before deciding; the signing
   * specification lists these commands.
   */
  signs?: 'resolution';
  /**
   * An agent whose circuit breaker is open (paused) may still send it: its own health reports, its
   * part in its recovery, the ledger of its own model calls. Any other command of a paused agent is
   * refused with `forbidden` until it resumes.
   */
  whilePaused?: true;
  summary: string;
}

/** An event's contract; `T` and `C` keep its type and category as written (`EventsOf` in @agora/decider). */
export interface EventDefinition<D extends z.ZodType = z.ZodType, T extends string = string, C extends string = string> {
  kind: 'event';
  type: T;
  /** Stream category the event is appended to. */
  category: C;
  /** `agora.evt.<category>.<type>` */
  subject: string;
  data: D;
  summary: string;
  /**
   * The schema version of `data`: 1 until the shape changes otherwise than by a new optional field
   * (a rename, a removal, a change of meaning), then one more, with an upcaster from the version
   * before (docs/event-versions.md). Stored with every event (metadata `schemaVersion`).
   */
  version: number;
  /** `upcasters[n - 1]` turns the data of version n into version n + 1 (pure): one for every version before `version`. */
  upcasters: readonly EventUpcaster[];
}

/** What one kind of reader may read of a query (operators and auditors read everything). */
export type QueryAccess =
  /** Every answer. */
  | { read: 'all' }
  /** Nothing: `forbidden`. */
  | { read: 'none' }
  /** A list, only of the reader's own: its parameter `param` must name the reader (filled in with the reader when absent). */
  | { read: 'own'; param: string }
  /** One thing, only when the reader is named at one of `fields` of the answer (dot paths; arrays are looked into). */
  | { read: 'party'; fields: readonly string[] };

/** The kinds of access a query's `visibility` gives. */
export const access = {
  all: { read: 'all' },
  none: { read: 'none' },
  own: (param: string): { read: 'own'; param: string } => ({ read: 'own', param }),
  party: (...fields: string[]): { read: 'party'; fields: readonly string[] } => ({ read: 'party', fields }),
} as const satisfies Record<string, QueryAccess | ((...args: string[]) => QueryAccess)>;

export interface QueryDefinition<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  kind: 'query';
  name: string;
  service: string;
  /** `agora.qry.<service>.<name>` */
  subject: string;
  /** The queue group that answers it, when not `service`'s own: figures computed from the log are served by `projections`. */
  servedBy?: string;
  /** Path under the gateway's `/v1/<service>/`, with `:param` placeholders taken from params. */
  httpPath: string;
  /** What an agent and an observer may read of it (its row of the visibility table; operators and auditors: everything). Absent: neither. */
  visibility?: { agent: QueryAccess; observer: QueryAccess };
  params: P;
  result: R;
  summary: string;
}

function token(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new Error(`${what} ${JSON.stringify(value)} must be lowercase letters, digits or "_"`);
  return value;
}

export function defineCommand<P extends z.ZodType, T extends string, S extends string, A extends string>(def: Omit<CommandDefinition<P, T, S, A>, 'kind' | 'subject'>): CommandDefinition<P, T, S, A> {
  if (def.roles.length === 0 && (def.issuers ?? []).length === 0) throw new Error(`${def.type}: a command needs roles, issuers, or both`);
  const subject = `agora.cmd.${token(def.service, 'service')}.${token(def.aggregate, 'aggregate')}.${token(def.verb, 'verb')}`;
  return { kind: 'command', subject, ...def };
}

/** An event's contract; `version` defaults to 1 (with no upcasters). */
export function defineEvent<D extends z.ZodType, T extends string, C extends string>(
  def: Omit<EventDefinition<D, T, C>, 'kind' | 'subject' | 'version' | 'upcasters'> & Partial<Pick<EventDefinition<D, T, C>, 'version' | 'upcasters'>>,
): EventDefinition<D, T, C> {
  const defined: EventDefinition<D, T, C> = { kind: 'event', subject: eventSubject(def.category, def.type), ...def, version: def.version ?? 1, upcasters: def.upcasters ?? [] };
  checkVersioning(defined);
  return defined;
}

export function defineQuery<P extends z.ZodType, R extends z.ZodType>(def: Omit<QueryDefinition<P, R>, 'kind' | 'subject'>): QueryDefinition<P, R> {
  const subject = `agora.qry.${token(def.service, 'service')}.${def.name
    .split('.')
    .map((t) => token(t, 'query name'))
    .join('.')}`;
  return { kind: 'query', subject, ...def };
}

/** `agora.evt.<category>.<EventType>`: where the relay publishes committed events. */
export function eventSubject(category: string, eventType: string): string {
  return `agora.evt.${category}.${eventType}`;
}

/** Agora's services: each has a key of its own and signs what it appends on its own behalf. */
export const SERVICE_NAMES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'projections', 'chamber', 'debate'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The actor a service signs as: `service:<name>`. No agent id can take this form (agent ids have no ":"). */
export const serviceActorId = (service: ServiceName): string => `service:${service}`;

/** The service an actor id names, or undefined for an agent (or an unknown service). */
export function serviceOfActor(actor: string): ServiceName | undefined {
  if (!actor.startsWith('service:')) return undefined;
  const name = actor.slice('service:'.length);
  return (SERVICE_NAMES as readonly string[]).includes(name) ? (name as ServiceName) : undefined;
}

/**
 * The NATS users Agora's own processes connect as: each service and the gateway under its own name
 * (deploy/nats/services.conf, replies under `_INBOX_<name>`), and the shared users of roles.conf.
 */
export const PROCESS_NATS_USERS = [...SERVICE_NAMES, 'gateway', 'service', 'agent', 'observer', 'auditor'] as const;

/** The NATS server Agora's processes and clients connect to when nothing names one (NATS_URL). */
export const DEFAULT_NATS_URL = '127.0.0.1:4222';

/** The process users that are one process's own: their replies arrive under `_INBOX_<name>`, the only inbox they may read. */
export const OWN_INBOX_NATS_USERS: readonly string[] = [...SERVICE_NAMES, 'gateway'];

/**
 * Agent ids no agent may take, with the reason. An agent's NATS user takes its replies under
 * `_INBOX_<agentId>` (a service actor `service:<name>` under `_INBOX_service_<name>`): an agent named
 * after a process's NATS user, or after a service actor's inbox token, would be allowed to read that
 * process's replies. So these ids are refused at registration and by `agora setup nats`.
 */
export const RESERVED_AGENT_IDS: ReadonlyMap<string, string> = new Map([
  ...OWN_INBOX_NATS_USERS.map((user): [string, string] => [user, `it is the NATS user of Agora's ${user} process, whose replies arrive under _INBOX_${user}`]),
  ...PROCESS_NATS_USERS.filter((user) => !OWN_INBOX_NATS_USERS.includes(user)).map((user): [string, string] => [user, `it is a NATS user of Agora's processes (deploy/nats/roles.conf)`]),
  ...SERVICE_NAMES.map((service): [string, string] => [`service_${service}`, `it is the inbox of the service actor service:${service} (_INBOX_service_${service})`]),
]);

/** Why an agent id is reserved for Agora's processes, or undefined when an agent may take it. */
export function reservedAgentId(agentId: string): string | undefined {
  const reason = RESERVED_AGENT_IDS.get(agentId);
  return reason === undefined ? undefined : `the agent id ${JSON.stringify(agentId)} is reserved: ${reason}; choose another id`;
}

/** True for a command no agent may send: only its `issuers` services, on their own behalf. */
export const isServiceOnly = (definition: Pick<CommandDefinition, 'roles'>): boolean => definition.roles.length === 0;

export const COMMAND_SUBJECT_PREFIX = 'agora.cmd';
export const QUERY_SUBJECT_PREFIX = 'agora.qry';
export const EVENT_SUBJECT_PREFIX = 'agora.evt';

/** Command payload type of a definition. */
export type PayloadOf<C> = C extends CommandDefinition<infer P> ? z.infer<P> : never;
export type DataOf<E> = E extends EventDefinition<infer D> ? z.infer<D> : never;

/** The queue group (service process) that answers a query. */
export const queryOwner = (q: QueryDefinition): string => q.servedBy ?? q.service;

type Definition = CommandDefinition | EventDefinition | QueryDefinition;
type ExportsOf<M> = M extends unknown ? M[keyof M] : never;

/** A protocol's contracts: its commands, events and queries. */
export interface Contracts<C extends CommandDefinition = CommandDefinition, E extends EventDefinition = EventDefinition, Q extends QueryDefinition = QueryDefinition> {
  commands: readonly C[];
  events: readonly E[];
  queries: readonly Q[];
}

/** The contracts a set of modules exports: every command, event and query definition among their exports. */
export type ContractsIn<M extends readonly object[]> = Contracts<Extract<ExportsOf<M[number]>, CommandDefinition>, Extract<ExportsOf<M[number]>, EventDefinition>, Extract<ExportsOf<M[number]>, QueryDefinition>>;

const isDefinition = (value: unknown): value is Definition =>
  typeof value === 'object' && value !== null && ['command', 'event', 'query'].includes((value as { kind?: unknown }).kind as string) && typeof (value as { subject?: unknown }).subject === 'string';

/**
 * A protocol's lists, built from the modules that declare its contracts (`import * as`): each
 * definition is declared once, and every list (the catalog, the authorization and visibility tables,
 * the generated documents, a decider's unions) is read from here. In the order of the export names.
 */
export function contractsOf<M extends readonly object[]>(...modules: M): ContractsIn<M> {
  const found = new Set<Definition>();
  for (const module of modules) for (const value of Object.values(module)) if (isDefinition(value)) found.add(value);
  const all = [...found];
  return {
    commands: all.filter((d) => d.kind === 'command'),
    events: all.filter((d) => d.kind === 'event'),
    queries: all.filter((d) => d.kind === 'query'),
  } as unknown as ContractsIn<M>;
}
