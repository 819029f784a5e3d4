/**
 * The visibility table (libs/contracts) applied to a query: by the service that answers it (its
 * dispatcher), for a reader named by a read token (the signing specification, "Read tokens",
 * checked against the agent directory) or by the gateway (READER_HEADER), on NATS and on the
 * in-process bus alike. A refusal is
 * `forbidden` with a message that is the same whether the thing asked for exists or not.
 */
import { AgoraError, namedAt, queryAccess, READ_TOKEN, readerOf, type QueryDefinition, type Reader, type Reply } from '@agora/contracts';
import { verifyReadToken } from '@agora/identity';
import type { AgentDirectory } from './directory.js';

/** The one refusal of something an agent is no party to: it does not say whether it exists. */
export function notAParty(reader: Reader, what: string): AgoraError {
  return new AgoraError('forbidden', `${reader.agentId} may not read ${what}: an agent reads only what it is a party to`);
}

/**
 * Answers a query for a reader (undefined: reads are open): refuses what the table gives the
 * reader none of, makes an own-list ask for the reader's own (its parameter filled in, or
 * refused when it names another agent), and shows one thing only to a party of it (not found is
 * refused the same way as not a party). Refusals are thrown as AgoraError `forbidden`.
 */
export async function answerQuery(reader: Reader | undefined, query: QueryDefinition, params: Record<string, unknown>, ask: (params: Record<string, unknown>) => Promise<Reply>): Promise<Reply> {
  if (reader === undefined) return ask(params);
  const name = `${query.service}.${query.name}`;
  const access = queryAccess(reader, name);
  switch (access.read) {
    case 'all':
      return ask(params);
    case 'none':
      throw new AgoraError('forbidden', `${reader.agentId} may not read ${name}: see the visibility table (docs/security.md, "Who may read")`);
    case 'own': {
      const asked = params[access.param];
      if (asked !== undefined && asked !== reader.agentId) throw new AgoraError('forbidden', `${reader.agentId} may list ${name} only with ${access.param}=${reader.agentId} (its own)`);
      return ask({ ...params, [access.param]: reader.agentId });
    }
    case 'party': {
      const reply = await ask(params);
      if (reply.ok ? !namedAt(reply.result, access.fields).has(reader.agentId) : reply.error.code === 'not_found') throw notAParty(reader, `this ${name} answer`);
      return reply;
    }
  }
}

export interface ReadTokenCheck {
  /** Whose tokens are good: the registry's agents (and the bootstrap operators). */
  directory: AgentDirectory;
  /** The audience tokens must name. Default READ_TOKEN.defaultAudience. */
  audience?: string;
  /** Clock of the check. Default: now. */
  now?: () => Date;
}

/** The reader an agent id names (the gateway's, whose credential check proved it), with the roles the directory gives it now: none for an agent it does not know. */
export async function readerOfId(agentId: string, directory: AgentDirectory): Promise<Reader> {
  return readerOf(agentId, (await directory.get(agentId))?.roles ?? []);
}

/** The reader a read token proves, with its registered roles; throws AgoraError with the token's refusal code otherwise. */
export async function readerOfToken(token: string, check: ReadTokenCheck): Promise<Reader> {
  const roles = new Map<string, readonly string[]>();
  const result = await verifyReadToken(token, {
    audience: check.audience ?? READ_TOKEN.defaultAudience,
    ...(check.now ? { now: check.now() } : {}),
    lookup: async (agentId) => {
      const record = await check.directory.get(agentId);
      if (record) roles.set(agentId, record.roles);
      return record && { publicKey: record.publicKey, status: record.status };
    },
  });
  if (!result.ok) throw new AgoraError(result.code, result.message);
  return readerOf(result.claims.sub, roles.get(result.claims.sub) ?? []);
}
