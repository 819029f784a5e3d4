import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandByType, commands, MIN_POSITION_FIELD, PAGE_LIMIT_MAX, type Reply } from '@agora/contracts';
import { InvalidKey, mintReadToken, parseKeyFile, type KeyPair } from '@agora/identity';
import { Agora, HttpTransport, type CommandName, type QueryName, type QueryParams, type QueryResult } from '@agora/sdk';
import { CommandFailed, stringOption, UsageError, type Io, type OptionSpec, type Parsed } from './command.js';

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';

/** The gateway's base URL: `--url`, else `AGORA_URL`, else http://127.0.0.1:8080. */
export function gatewayUrl(args: Parsed, io: Io, command: string): string {
  const text = stringOption(args, 'url') ?? io.env['AGORA_URL'] ?? DEFAULT_GATEWAY_URL;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`the gateway URL ${JSON.stringify(text)} is not a URL (e.g. http://127.0.0.1:8080)`, command);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the gateway URL must be http:// or https:// (got ${JSON.stringify(text)})`, command);
  return url.href.replace(/\/+$/, '');
}

/** Network failures as the same kind of failure a reply reports, so they print alike. */
export function unreachable(url: string, error: unknown): CommandFailed {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new CommandFailed('unavailable', `cannot reach the gateway at ${url} (${why}); is it running? Set --url or AGORA_URL`);
}

/** The result of an ok reply; a failed reply becomes a CommandFailed (printed as `error <code>: <message>`). */
export function resultOf<T>(reply: Reply<T>): T {
  if (!reply.ok) throw new CommandFailed(reply.error.code, reply.error.message, reply.error.details);
  return reply.result;
}

/**
 * An SDK client that reads through the gateway (GET /v1/<service>/...): each read carries a fresh
 * read token signed with the reader's key file (readKeyPath: --read-key, --key, $AGORA_KEY_FILE),
 * for the audience $AGORA_READ_AUDIENCE, else the one the gateway's /health names. Without a key
 * file the reads go unsigned (a gateway with open reads answers them).
 */
export function gatewayReader(args: Parsed, io: Io, command: string): Agora {
  const url = gatewayUrl(args, io, command);
  const path = readKeyPath(args, io);
  if (path === undefined) return Agora.over(new HttpTransport(url));
  const key = readKeyFile(path);
  const agentId = stringOption(args, 'actor') ?? key.agentId;
  if (!agentId) throw new UsageError(`the key file ${path} names no agentId: say who reads with --actor <agentId>`, command);
  const audience = io.env['AGORA_READ_AUDIENCE'] || undefined;
  return Agora.over(new HttpTransport(url, { agentId, secretKey: key.secretKey, ...(audience === undefined ? {} : { audience }) }));
}

/** A reply of the SDK as the CLI prints it: a gateway it cannot reach says how to point at one. */
function withHint<T>(reply: Reply<T>): Reply<T> {
  if (!reply.ok && reply.error.code === 'unavailable' && reply.error.message.startsWith('cannot reach')) throw new CommandFailed('unavailable', `${reply.error.message}; is it running? Set --url or AGORA_URL`);
  return reply;
}

/** Asks a query through the SDK, after --min-position when the command was given one; a refusal becomes a CommandFailed. */
export async function queryGateway<N extends QueryName>(agora: Agora, name: N, params: QueryParams<N>, args?: Parsed): Promise<QueryResult<N>> {
  const minPosition = args === undefined ? undefined : stringOption(args, 'min-position');
  return resultOf(withHint(await agora.tryQuery(name, params, minPosition === undefined ? {} : { minPosition })));
}

/**
 * Every item of a paged list query (`limit` and `cursor`): follows `nextCursor` from page to page,
 * `pageSize` items a request (default PAGE_LIMIT_MAX), and returns the list's items in order.
 */
export async function queryAllPages<N extends QueryName, T>(agora: Agora, name: N, field: string, params: QueryParams<N>, pageSize = PAGE_LIMIT_MAX, args?: Parsed): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = (await queryGateway(agora, name, { ...(params as Record<string, unknown>), limit: pageSize, ...(cursor === undefined ? {} : { cursor }) } as QueryParams<N>, args)) as Record<string, unknown> & { nextCursor?: string };
    const list = page[field];
    if (!Array.isArray(list)) throw new CommandFailed('internal', `the gateway answered ${name} without a "${field}" list`);
    items.push(...(list as T[]));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items;
}

export interface KeyFile extends KeyPair {
  agentId?: string;
}

/** Reads a key file written by `agora keys new` (or any `{agentId, publicKey, secretKey}` JSON). */
export function readKeyFile(path: string): KeyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandFailed(undefined, `cannot read the key file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return parseKeyFile(text);
  } catch (error) {
    if (error instanceof InvalidKey) throw new CommandFailed(undefined, `${path}: ${error.message}`);
    throw error;
  }
}

/**
 * The key file that signs read tokens: `--read-key`, else the command's `--key`, else
 * $AGORA_KEY_FILE, else the operator key `npm start` created (<AGORA_DATA_DIR>/operator.key.json,
 * ./data by default) when it is there; undefined: reads go unsigned.
 */
export function readKeyPath(args: Parsed, io: Io): string | undefined {
  return stringOption(args, 'read-key') ?? stringOption(args, 'key') ?? (io.env['AGORA_KEY_FILE'] || undefined) ?? standaloneOperatorKeyFile(io);
}

/** Refusals of a signature or a read token: the key file that signed is worth naming. */
const KEY_REFUSALS = new Set(['bad_signature', 'unknown_actor', 'actor_disabled', 'wrong_audience', 'token_expired', 'token_not_yet_valid', 'invalid_token', 'forbidden']);

/**
 * Which key file signed, for a refusal of a signature or a read token: a key picked by default (the
 * standalone's ./data/operator.key.json) is the usual cause when Agora runs elsewhere (`npm run cluster`).
 */
export function keyFileHint(code: string | undefined, args: Parsed, io: Io): string | undefined {
  if (code === undefined || !KEY_REFUSALS.has(code)) return undefined;
  const given = stringOption(args, 'read-key') ?? stringOption(args, 'key') ?? (io.env['AGORA_KEY_FILE'] || undefined);
  const path = given ?? standaloneOperatorKeyFile(io);
  if (path === undefined) return undefined;
  return given !== undefined
    ? `signed with the key file ${path}`
    : `signed with the key file ${path}, the standalone's operator key, used because no --read-key, --key or AGORA_KEY_FILE was given: name the reader's key with --read-key <file> (for npm run cluster: data/cluster/operator.key.json)`;
}

/** <AGORA_DATA_DIR>/operator.key.json (./data by default), the key `npm start` makes for its operator (apps/standalone), if it is there. */
function standaloneOperatorKeyFile(io: Io): string | undefined {
  const file = join(io.env['AGORA_DATA_DIR'] || 'data', 'operator.key.json');
  return existsSync(file) ? file : undefined;
}

/**
 * A fresh read token (five minutes, audience $AGORA_READ_AUDIENCE else the default) made from the
 * reader's key file, for `agora token` and the headers of every read.
 */
export function readToken(args: Parsed, io: Io, command: string, keyPath: string, lifetimeSeconds?: number): string {
  const key = readKeyFile(keyPath);
  const agentId = stringOption(args, 'actor') ?? key.agentId;
  if (!agentId) throw new UsageError(`the key file ${keyPath} names no agentId: say who reads with --actor <agentId>`, command);
  const audience = io.env['AGORA_READ_AUDIENCE'] || undefined;
  return mintReadToken({ agentId, secretKey: key.secretKey, ...(audience === undefined ? {} : { audience }), ...(lifetimeSeconds === undefined ? {} : { lifetimeSeconds }) });
}

/** `authorization: Bearer <read token>` when a reader key file is given (readKeyPath), else nothing. */
export function readHeaders(args: Parsed, io: Io, command: string): Record<string, string> {
  const path = readKeyPath(args, io);
  return path === undefined ? {} : { authorization: `Bearer ${readToken(args, io, command, path)}` };
}

/** The actor of a command: `--actor`, else the key file's agentId. */
export function actorOf(args: Parsed, key: KeyFile, keyPath: string, command: string): string {
  const actor = stringOption(args, 'actor') ?? key.agentId;
  if (!actor) throw new UsageError(`the key file ${keyPath} names no agentId: say who signs with --actor <agentId>`, command);
  return actor;
}

/**
 * Signs a command with the key and sends it through @agora/sdk (POST /v1/commands); resolves with
 * the reply. A type the contracts do not define is refused here as the gateway would refuse it.
 */
export async function sendCommand(baseUrl: string, input: { type: string; actor: string; payload: Record<string, unknown>; key: KeyFile }): Promise<Reply> {
  if (!commandByType(input.type)) {
    const knownTypes = commands.map((c) => c.type);
    return { ok: false, error: { code: 'invalid_command', message: `unknown command type ${JSON.stringify(input.type)}; known types: ${knownTypes.join(', ')}`, details: { knownTypes } } };
  }
  const agora = Agora.over(new HttpTransport(baseUrl), { signer: { secretKey: input.key.secretKey, agentId: input.actor } });
  return withHint(await agora.trySend(input.type as CommandName, input.payload as never));
}

/**
 * What a command reply's result says, in one line (`RegisterAgent: agent-alice@0 [AgentRegistered] at 12`):
 * the log position ends the line when the reply has one, to give to a query as `--min-position`.
 */
export function describeCommandResult(type: string, result: unknown): string {
  const r = result as { streamId?: unknown; revision?: unknown; events?: unknown; duplicate?: unknown; position?: unknown } | null;
  if (!r || typeof r.streamId !== 'string' || !Array.isArray(r.events)) return `${type}: ${JSON.stringify(result)}`;
  const what = r.events.length === 0 ? 'nothing to change' : `[${r.events.join(', ')}]`;
  return `${type}: ${r.streamId}@${String(r.revision)} ${what}${typeof r.position === 'string' ? ` at ${r.position}` : ''}${r.duplicate === true ? ' (already handled: nothing new written)' : ''}`;
}

/** The option of every command that reads (queries, event streams): read your writes. */
export const MIN_POSITION_OPTION: Record<string, OptionSpec> = {
  'min-position': {
    type: 'string',
    value: '<position>',
    description: "answer only once the gateway's read models have reached this log position (the one a command printed after `at`); else read_model_behind",
  },
};

/** `url` with `minPosition` set from --min-position, when given. */
export function withMinPosition(url: URL, args: Parsed): URL {
  const minPosition = stringOption(args, 'min-position');
  if (minPosition !== undefined) url.searchParams.set(MIN_POSITION_FIELD, minPosition);
  return url;
}

export function printJson(io: Io, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}
