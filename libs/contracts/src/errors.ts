import { z } from 'zod';

/**
 * Every error code a reply can carry. Stable, snake_case: agents switch on them.
 * `status` is the HTTP status the gateway answers with.
 */
export const ERROR_CODES = {
  invalid_command: { status: 400, meaning: 'the message is not valid JSON, or a field is missing, extra or of the wrong type' },
  unsigned_command: { status: 401, meaning: 'the envelope carries no signature' },
  bad_signature: { status: 401, meaning: "the signature does not verify against the actor's registered key" },
  stale_command: { status: 401, meaning: 'issuedAt is outside the accepted window (replay protection)' },
  unknown_actor: { status: 401, meaning: 'no agent with that id is registered' },
  unauthenticated: { status: 401, meaning: 'the read carries no read token (Authorization: Bearer <token>, or ?access_token=) and this gateway closes reads' },
  invalid_token: { status: 401, meaning: 'the read token is not a well-formed Agora read token (three base64url parts, header and claims as the signing specification says)' },
  wrong_audience: { status: 401, meaning: "the read token's aud is not this gateway's audience" },
  token_expired: { status: 401, meaning: "the read token's exp has passed (beyond the allowed clock skew)" },
  token_not_yet_valid: { status: 401, meaning: "the read token's iat lies in the future (beyond the allowed clock skew)" },
  token_lifetime_too_long: { status: 401, meaning: 'the read token lives longer than the longest lifetime accepted (exp - iat)' },
  actor_disabled: { status: 403, meaning: 'the agent is disabled' },
  forbidden: { status: 403, meaning: 'the agent lacks the role the command needs, or may not act on this aggregate' },
  service_only: { status: 403, meaning: "only an Agora service issues this command, on its own behalf, signed with its service key" },
  rate_limited: { status: 429, meaning: "the agent is over the rate limit a recovery's resolution set it (condition rate_limit); retry later" },
  too_many_sessions: { status: 429, meaning: 'the gateway keeps as many login challenges, console sessions or MCP sessions as it holds for this caller or in all (its bounds: docs/configuration.md); end one, or retry after the seconds Retry-After names' },
  not_found: { status: 404, meaning: 'the aggregate or resource does not exist' },
  conflict: { status: 409, meaning: 'the aggregate changed concurrently too many times; retry' },
  illegal_state: { status: 409, meaning: 'the command is not allowed in the current state' },
  command_id_reused: { status: 409, meaning: 'the commandId was used before by another command (another stream, type, actor or payload); nothing was written: a new command needs a new commandId' },
  payload_too_large: { status: 413, meaning: 'the message exceeds the size limit' },
  unavailable: { status: 503, meaning: 'a service or the event store is unreachable' },
  read_model_behind: { status: 503, meaning: 'the read model answering the query had not reached the minPosition asked for within the bounded wait; details: {minPosition, position} (how far it has got); retry later' },
  tool_call_denied: { status: 403, meaning: "a governed tool call was refused (by its policy, the validators' vote, a person, or a cancellation); the upstream MCP server never saw it" },
  tool_call_expired: { status: 504, meaning: 'a governed tool call had no approving decision in time (the voting session expired, or the proxy stopped waiting); the upstream MCP server never saw it' },
  timeout: { status: 504, meaning: 'no reply within the request timeout' },
  internal: { status: 500, meaning: 'an unexpected error; the log has the details' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

/** An error meant for the caller: becomes `{ok:false, error:{code, message, details}}`. */
export class AgoraError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AgoraError';
  }
}
