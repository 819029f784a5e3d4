/**
 * Commands and queries by name, typed from the contracts' zod schemas (the one definition): a
 * command's name is its type (`SubmitProposal`), a query's name is the name its definition is
 * exported under (`GetProposal`). Nothing here is written out by hand: the types are inferred
 * from `@agora/contracts`, and the runtime tables are read from the same module.
 */
import * as contracts from '@agora/contracts';
import { commandByType, type CommandDefinition, type QueryDefinition } from '@agora/contracts';
import type { z } from 'zod';

type Contracts = typeof contracts;

/** Every command type (`SubmitProposal`, `CastValidatorVote`, ...). */
export type CommandName = {
  [K in keyof Contracts]: Contracts[K] extends CommandDefinition & { kind: 'command' } ? K : never;
}[keyof Contracts] &
  string;

/** Every query by its definition's name (`GetProposal`, `ListAgents`, ...). */
export type QueryName = {
  [K in keyof Contracts]: Contracts[K] extends QueryDefinition & { kind: 'query' } ? K : never;
}[keyof Contracts] &
  string;

/** What a sender writes as a command's payload (defaults may be left out). */
export type CommandInput<N extends CommandName> = Contracts[N] extends CommandDefinition<infer P> ? z.input<P> : never;
/** A query's parameters as a caller writes them. */
export type QueryParams<N extends QueryName> = Contracts[N] extends QueryDefinition<infer P, z.ZodType> ? z.input<P> : never;
/** What a query answers with. */
export type QueryResult<N extends QueryName> = Contracts[N] extends QueryDefinition<z.ZodType, infer R> ? z.output<R> : never;

const queryTable = new Map<string, QueryDefinition>(
  (Object.entries(contracts) as [string, unknown][]).filter((entry): entry is [string, QueryDefinition] => (entry[1] as { kind?: unknown } | null)?.kind === 'query'),
);

/** The definition of a command type; throws for a type the contracts do not define. */
export function commandDefinition(type: string): CommandDefinition {
  const definition = commandByType(type);
  if (!definition) throw new TypeError(`unknown command type ${JSON.stringify(type)}`);
  return definition;
}

/** The definition of a query by its name (`GetProposal`); throws for a name the contracts do not define. */
export function queryDefinition(name: string): QueryDefinition {
  const definition = queryTable.get(name);
  if (!definition) throw new TypeError(`unknown query ${JSON.stringify(name)}`);
  return definition;
}

/** Every query with the name a caller uses for it. */
export function namedQueries(): ReadonlyArray<readonly [name: string, definition: QueryDefinition]> {
  return [...queryTable.entries()];
}
