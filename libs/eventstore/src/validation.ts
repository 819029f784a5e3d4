import { randomUUID } from 'node:crypto';
import { InvalidEventData, InvalidEventType, InvalidExpectedRevision, InvalidStreamName, WrongExpectedRevision } from './errors.js';
import type { EventData, ExpectedRevision, StreamAppend } from './port.js';

/** `<category>-<id>`: category of letters, digits and `_` (no `-`), id of letters, digits, `_`, `-`, `:`, `@`, `+`, `=`. */
const STREAM_RE = /^[A-Za-z][A-Za-z0-9_]*-[A-Za-z0-9_\-:@+=]+$/;
/** `ProposalSubmitted`, `V2.VoteCast`: dot-separated words, no wildcards or spaces. */
const EVENT_TYPE_RE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;
const MAX_STREAM_LENGTH = 200;
const MAX_EVENT_TYPE_LENGTH = 120;

export function assertValidStreamId(streamId: string): void {
  if (typeof streamId !== 'string' || streamId.length === 0) throw new InvalidStreamName(String(streamId), 'must be a non-empty string');
  if (streamId.length > MAX_STREAM_LENGTH) throw new InvalidStreamName(streamId, `longer than ${MAX_STREAM_LENGTH} characters`);
  if (!STREAM_RE.test(streamId)) {
    const reason = /[.*> \t\r\n]/.test(streamId)
      ? 'contains ".", "*", ">" or whitespace'
      : !streamId.includes('-')
        ? 'must be <category>-<id>'
        : 'category must be letters, digits or "_" (no "-"), id letters, digits or _-:@+=';
    throw new InvalidStreamName(streamId, reason);
  }
}

export function assertValidExpectedRevision(streamId: string, expected: ExpectedRevision): void {
  if (expected === 'any' || expected === 'no_stream' || expected === 'stream_exists') return;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0) {
    throw new InvalidExpectedRevision(streamId, expected);
  }
}

/** Walks a value and throws unless it is plain JSON: null, booleans, finite numbers, strings, arrays, plain objects. */
export function assertJson(value: unknown, onError: (path: string, reason: string) => never, path = '', seen = new Set<unknown>()): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) onError(path, `is ${value}, which JSON cannot represent`);
      return;
    case 'object': {
      if (value === null) return;
      if (seen.has(value)) onError(path, 'is a circular reference');
      seen.add(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) assertJson(value[i], onError, `${path}[${i}]`, seen);
      } else {
        const proto = Object.getPrototypeOf(value) as unknown;
        if (proto !== Object.prototype && proto !== null) {
          onError(path, `is a ${(value as object).constructor?.name ?? 'non-plain object'}, not a plain object`);
        }
        for (const [k, v] of Object.entries(value)) assertJson(v, onError, path ? `${path}.${k}` : k, seen);
      }
      seen.delete(value);
      return;
    }
    default:
      onError(path, `is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, which JSON cannot represent`);
  }
}

export interface PreparedEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Not an id: KurrentDB refuses it, and no generator produces it. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Validates an append before any adapter writes anything, and fills in missing ids.
 * Every adapter calls this first, so a bad append is refused the same way everywhere.
 */
export function prepareAppend(streamId: string, events: readonly EventData[], expected: ExpectedRevision): PreparedEvent[] {
  assertValidStreamId(streamId);
  assertValidExpectedRevision(streamId, expected);
  if (!Array.isArray(events) || events.length === 0) {
    throw new InvalidEventData(streamId, '(none)', 'events', 'must be a non-empty array');
  }
  const ids = new Set<string>();
  return events.map((e, i) => {
    const type = e?.type;
    if (typeof type !== 'string' || type.length === 0) throw new InvalidEventType(streamId, String(type), 'must be a non-empty string');
    if (type.length > MAX_EVENT_TYPE_LENGTH) throw new InvalidEventType(streamId, type, `longer than ${MAX_EVENT_TYPE_LENGTH} characters`);
    if (!EVENT_TYPE_RE.test(type)) throw new InvalidEventType(streamId, type, 'must be dot-separated words of letters, digits or "_"');
    const fail = (path: string, reason: string): never => {
      throw new InvalidEventData(streamId, type, `events[${i}].${path}`, reason);
    };
    if (e.data === undefined) fail('data', 'is missing');
    assertJson(e.data, (p, r) => fail(p ? `data.${p}` : 'data', r));
    const metadata = e.metadata ?? {};
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) fail('metadata', 'must be an object');
    assertJson(metadata, (p, r) => fail(p ? `metadata.${p}` : 'metadata', r));
    const id = e.id ?? randomUUID();
    if (typeof id !== 'string' || !UUID_RE.test(id)) fail('id', 'must be a UUID');
    if (id === NIL_UUID) fail('id', 'must not be the nil UUID (all zeros)');
    if (ids.has(id)) fail('id', `repeats ${id} within one append`);
    ids.add(id);
    return { id: id.toLowerCase(), type, data: e.data, metadata };
  });
}

/** Most streams one atomic append may write (`EventStore.appendMany`). */
export const MAX_APPEND_MANY_STREAMS = 16;

/** `prepareAppend` for each stream of an atomic append, which must name distinct streams and repeat no event id across them. */
export function prepareAppendMany(appends: readonly StreamAppend[]): PreparedEvent[][] {
  if (!Array.isArray(appends) || appends.length === 0 || appends.length > MAX_APPEND_MANY_STREAMS) {
    throw new InvalidEventData(String((appends as StreamAppend[] | undefined)?.[0]?.streamId ?? '(none)'), '(none)', 'appends', `must be 1 to ${MAX_APPEND_MANY_STREAMS} streams' appends`);
  }
  const streams = new Set<string>();
  const ids = new Set<string>();
  return appends.map(({ streamId, events, expectedRevision }) => {
    const prepared = prepareAppend(streamId, events, expectedRevision);
    if (streams.has(streamId)) throw new InvalidEventData(streamId, prepared[0]!.type, 'appends', `name stream ${streamId} twice`);
    streams.add(streamId);
    prepared.forEach((e, i) => {
      if (ids.has(e.id)) throw new InvalidEventData(streamId, e.type, `events[${i}].id`, `repeats ${e.id} within one append`);
      ids.add(e.id);
    });
    return prepared;
  });
}

/** Checks an expected revision against the stream's actual last revision (-1 when the stream has no events). */
export function checkExpectedRevision(streamId: string, expected: ExpectedRevision, lastRevision: number): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && lastRevision === -1) ||
    (expected === 'stream_exists' && lastRevision >= 0) ||
    expected === lastRevision;
  if (!ok) throw new WrongExpectedRevision(streamId, expected, lastRevision < 0 ? 'no_stream' : lastRevision);
}
