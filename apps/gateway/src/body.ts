import type { IncomingMessage } from 'node:http';
import { jsonDepthExceeds, MAX_JSON_DEPTH, tooDeepMessage } from '@agora/messaging';
import { GatewayError } from './http-reply.js';

/** Beyond this many bytes past the limit, a body is not worth draining: the connection is dropped. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

/** True for `application/json` and `application/<anything>+json`, with any parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/**
 * Reads a request body of at most `limit` bytes. An over-long body is still read to its end (up
 * to a bound) and thrown away, so that the client, still sending, can read the 413 instead of
 * seeing its connection reset.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit + MAX_DRAIN_BYTES) {
    req.destroy();
    throw tooLarge(declared, limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else if (size > limit + MAX_DRAIN_BYTES) {
      req.destroy();
      break;
    }
  }
  if (size > limit) throw tooLarge(size, limit);
  return Buffer.concat(chunks, size);
}

/** Reads and drops whatever is left of a body, so a refusal reaches the client cleanly. */
export async function discardBody(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return;
  await readBody(req, 0).catch(() => undefined);
}

function tooLarge(size: number, limit: number): GatewayError {
  return new GatewayError('payload_too_large', `the body is ${size} bytes; the limit is ${limit} bytes`, { size, limit });
}

/** Parses a command body: UTF-8 JSON whose top level is an object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  if (body.length === 0) throw new GatewayError('invalid_command', 'the body is empty; a command is a signed JSON envelope');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new GatewayError('invalid_command', 'the body is not UTF-8 text');
  }
  if (jsonDepthExceeds(text)) throw new GatewayError('invalid_command', tooDeepMessage(), { maxDepth: MAX_JSON_DEPTH });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new GatewayError('invalid_command', `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new GatewayError('invalid_command', `the body is ${kind}; a command is a JSON object (a signed envelope)`);
  }
  return value as Record<string, unknown>;
}
