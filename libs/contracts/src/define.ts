import type { z } from 'zod';
import type { Role } from './common.js';

/** Subjects: lowercase, dot-separated, no wildcards. */
const TOKEN = /^[a-z][a-z0-9_]*$/;

export interface CommandDefinition<P extends z.ZodType = z.ZodType> {
  kind: 'command';
  type: string;
  service: string;
  aggregate: string;
  verb: string;
  /** `agora.cmd.<service>.<aggregate>.<verb>` */
  subject: string;
  payload: P;
  /** The actor needs at least one of these roles. */
  roles: readonly Role[];
  summary: string;
}

export interface EventDefinition<D extends z.ZodType = z.ZodType> {
  kind: 'event';
  type: string;
  /** Stream category the event is appended to. */
  category: string;
  /** `agora.evt.<category>.<type>` */
  subject: string;
  data: D;
  summary: string;
}

export interface QueryDefinition<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  kind: 'query';
  name: string;
  service: string;
  /** `agora.qry.<service>.<name>` */
  subject: string;
  /** Path under the gateway's `/v1/<service>/`, with `:param` placeholders taken from params. */
  httpPath: string;
  params: P;
  result: R;
  summary: string;
}

function token(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new Error(`${what} ${JSON.stringify(value)} must be lowercase letters, digits or "_"`);
  return value;
}

export function defineCommand<P extends z.ZodType>(def: Omit<CommandDefinition<P>, 'kind' | 'subject'>): CommandDefinition<P> {
  const subject = `agora.cmd.${token(def.service, 'service')}.${token(def.aggregate, 'aggregate')}.${token(def.verb, 'verb')}`;
  return { kind: 'command', subject, ...def };
}

export function defineEvent<D extends z.ZodType>(def: Omit<EventDefinition<D>, 'kind' | 'subject'>): EventDefinition<D> {
  return { kind: 'event', subject: eventSubject(def.category, def.type), ...def };
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

export const COMMAND_SUBJECT_PREFIX = 'agora.cmd';
export const QUERY_SUBJECT_PREFIX = 'agora.qry';
export const EVENT_SUBJECT_PREFIX = 'agora.evt';

/** Command payload type of a definition. */
export type PayloadOf<C> = C extends CommandDefinition<infer P> ? z.infer<P> : never;
export type DataOf<E> = E extends EventDefinition<infer D> ? z.infer<D> : never;
