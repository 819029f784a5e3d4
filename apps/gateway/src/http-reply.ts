import type { ServerResponse } from 'node:http';
import { ERROR_CODES, httpStatusOf, type ErrorCode, type Reply } from '@agora/contracts';
import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';

/**
 * A failure the gateway answers itself (before or instead of asking a service), in the reply
 * shape every Agora client already understands. `status` defaults to the code's status.
 */
export class GatewayError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    status?: number,
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = status ?? httpStatusOf(code);
  }

  toReply(): Reply<never> {
    return { ok: false, error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

/** The HTTP status of a reply: 200 when ok, else the status of its error code. */
export function statusOfReply(reply: Reply): number {
  return reply.ok ? 200 : httpStatusOf(reply.error.code);
}

/** The realm of the gateway's authentication challenges. */
export const AUTH_REALM = 'agora';

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 9110 section 11.6.1; Bearer as RFC 6750 says it): reads
 * (the HTTP API, /mcp, the event stream) take an Agora read token as a bearer token, signed by the
 * reader's own key; a refused token is `error="invalid_token"` with Agora's code and message. A command
 * (POST /v1/commands) is authenticated by its envelope's signature instead, which the challenge says.
 */
export function authenticateChallenge(reply: unknown, path = ''): string {
  const error = (reply as { ok?: boolean; error?: { code?: string; message?: string } }).error;
  const quoted = (text: string) => `"${text.replace(/["\\]/g, "'").slice(0, 300)}"`;
  const expected = 'an Agora read token signed with the reader\'s key (agora token --key <key file>), as Authorization: Bearer <token>';
  const params = [`realm=${quoted(AUTH_REALM)}`, `scope=${quoted('read')}`];
  if (path.startsWith('/v1/commands')) {
    params.push(`error=${quoted('invalid_request')}`, `error_description=${quoted(`${error?.code}: a command is authenticated by its envelope's Ed25519 signature, not by a token: ${error?.message ?? ''}`)}`);
  } else if (error?.code !== undefined && error.code !== 'unauthenticated') {
    params.push(`error=${quoted('invalid_token')}`, `error_description=${quoted(`${error.code}: ${error.message ?? ''}; expected ${expected}`)}`);
  } else {
    params.push(`error_description=${quoted(`expected ${expected}`)}`);
  }
  return `Bearer ${params.join(', ')}`;
}

/** Every 401 says how to authenticate (RFC 9110): MCP clients and HTTP libraries read it. Call before the head is written. */
export function challengeUnauthenticated(res: ServerResponse, status: number, reply: unknown): void {
  if (status === 401) res.setHeader('www-authenticate', authenticateChallenge(reply, (res.req as { url?: string } | undefined)?.url));
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  challengeUnauthenticated(res, status, body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The error code for an HTTP status Nest or Express produced on its own (404 for an unknown route, ...). */
function codeOfStatus(status: number): ErrorCode {
  if (status === 404 || status === 405) return 'not_found';
  if (status === 400 || status === 415) return 'invalid_command';
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find((code) => ERROR_CODES[code].status === status);
  return match ?? 'internal';
}

/**
 * Turns anything thrown while handling a request into the Agora reply shape, so no caller ever
 * gets Express's HTML error page: GatewayError as is, Nest's HttpExceptions (an unknown route is
 * a NotFoundException) by status, anything else `internal` with the details in the log only.
 */
@Catch()
export class ReplyExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('agora:gateway');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<ServerResponse>();
    const req = http.getRequest<{ method?: string; url?: string }>();
    let error: GatewayError;
    if (exception instanceof GatewayError) error = exception;
    else if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = codeOfStatus(status);
      const message = code === 'not_found' ? `no route ${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0]}` : exception.message;
      error = new GatewayError(code, message, undefined, status);
    } else {
      this.logger.error(`${req.method} ${req.url} failed`, exception instanceof Error ? exception.stack : String(exception));
      error = new GatewayError('internal', 'an unexpected error occurred; the gateway log has the details');
    }
    if (res.headersSent) {
      // A stream already under way (SSE): all that is left is to end it.
      res.end();
      return;
    }
    sendJson(res, error.status, error.toReply());
  }
}
