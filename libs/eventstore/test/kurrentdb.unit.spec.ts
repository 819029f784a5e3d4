import {
  ANY,
  AccessDeniedError,
  AppendRecordSizeExceededError,
  CancelledError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NO_STREAM,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  TimeoutError,
  TransactionMaxSizeExceededError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { InvalidEventData, InvalidPosition, StoreRefused, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from '../src/errors.js';
import { openKurrentDbEventStore } from '../src/kurrentdb/index.js';
import {
  NO_POSITION,
  comparePositions,
  decodePosition,
  encodePosition,
  isSystemEvent,
  isUsablePosition,
  mapAppendError,
  mapPositionCheckError,
  mapReadAllError,
  mapReadStreamError,
  worthRetrying,
  COMMIT_KEY,
  commitPlaceOf,
  withCommitPlace,
  normalizeConnectionString,
  redactConnectionString,
  toActualRevision,
  toRecordedEvent,
  toStreamState,
  type ClientRecordedEvent,
} from '../src/kurrentdb/mapping.js';
import { startSilentPorts, type SilentPorts } from './support/ports.js';

describe('kurrentdb positions', () => {
  it('encode as <commit>/<prepare> and decode back', () => {
    const p = { commit: 18446744073709551614n, prepare: 123n };
    expect(encodePosition(p)).toBe('18446744073709551614/123');
    expect(decodePosition(encodePosition(p))).toEqual(p);
    expect(decodePosition('0/0')).toEqual({ commit: 0n, prepare: 0n });
  });

  it.each(['not a position', '', '1', '1/2/3', '-1/0', '01/2', '1/02', '1.5/2', ' 1/2', '1/2 ', '0x10/1', '18446744073709551615/0', '99999999999999999999/0'])(
    'refuses %p with InvalidPosition',
    (bad) => {
      expect(() => decodePosition(bad)).toThrow(InvalidPosition);
    },
  );

  it('refuses a non-string', () => {
    expect(() => decodePosition(42 as unknown as string)).toThrow(InvalidPosition);
  });

  it('order by commit, then prepare', () => {
    expect(comparePositions({ commit: 1n, prepare: 9n }, { commit: 2n, prepare: 0n })).toBeLessThan(0);
    expect(comparePositions({ commit: 2n, prepare: 1n }, { commit: 2n, prepare: 0n })).toBeGreaterThan(0);
    expect(comparePositions({ commit: 2n, prepare: 2n }, { commit: 2n, prepare: 2n })).toBe(0);
  });

  it('treat a missing position and the server "none" marker as unusable', () => {
    expect(isUsablePosition(undefined)).toBe(false);
    expect(isUsablePosition({ commit: NO_POSITION, prepare: NO_POSITION })).toBe(false);
    expect(isUsablePosition({ commit: -1n, prepare: -1n })).toBe(false);
    expect(isUsablePosition({ commit: 10n, prepare: 10n })).toBe(true);
  });
});

describe('kurrentdb expected revisions', () => {
  it('map to the client stream states', () => {
    expect(toStreamState(0)).toBe(0n);
    expect(toStreamState(41)).toBe(41n);
    expect(toStreamState('no_stream')).toBe(NO_STREAM);
    expect(toStreamState('stream_exists')).toBe(STREAM_EXISTS);
    expect(toStreamState('any')).toBe(ANY);
  });

  it('read the actual revision from what the client reports', () => {
    expect(toActualRevision(7n)).toBe(7);
    expect(toActualRevision(0n)).toBe(0);
    expect(toActualRevision('no_stream')).toBe('no_stream');
    expect(toActualRevision(-1n)).toBe('no_stream');
    expect(toActualRevision(-5n)).toBe('no_stream');
    expect(toActualRevision(undefined)).toBe('no_stream');
  });
});

describe('kurrentdb errors', () => {
  const wrongVersion = (expected: bigint | 'no_stream' | 'stream_exists' | 'any', current: bigint | 'no_stream') =>
    new WrongExpectedVersionError(undefined, { streamName: 'order-1', expected, current });

  it('WrongExpectedVersionError becomes WrongExpectedRevision with the port values', () => {
    const e1 = mapAppendError('order-1', 0, wrongVersion(0n, 2n));
    expect(e1).toBeInstanceOf(WrongExpectedRevision);
    expect(e1).toMatchObject({ streamId: 'order-1', expected: 0, actual: 2, code: 'wrong_expected_revision' });

    expect(mapAppendError('order-1', 'stream_exists', wrongVersion('stream_exists', 'no_stream'))).toMatchObject({
      expected: 'stream_exists',
      actual: 'no_stream',
    });
    expect(mapAppendError('order-1', 'no_stream', wrongVersion('no_stream', 0n))).toMatchObject({ expected: 'no_stream', actual: 0 });
    expect(mapAppendError('order-1', 3, wrongVersion(3n, -1n))).toMatchObject({ actual: 'no_stream' });
  });

  it('a conflict on any, or on stream_exists with the stream there, is ids already stored elsewhere: bad input the command handler recognises', () => {
    for (const [expected, state] of [
      ['any', 'any'],
      ['stream_exists', 'stream_exists'],
    ] as const) {
      const error = mapAppendError('order-1', expected, wrongVersion(state, 4n), 'Placed');
      expect(error).toBeInstanceOf(InvalidEventData);
      expect(error).toMatchObject({ streamId: 'order-1', eventType: 'Placed', path: 'events[0].id' });
      expect((error as InvalidEventData).reason).toContain('already stored');
    }
    // A stream that is not there is a plain conflict for stream_exists.
    expect(mapAppendError('order-1', 'stream_exists', wrongVersion('stream_exists', 'no_stream'))).toBeInstanceOf(WrongExpectedRevision);
  });

  it('connection failures become StoreUnavailable naming the stream, with the cause', () => {
    const cause = new UnavailableError(undefined, '14 UNAVAILABLE: No connection established');
    const error = mapAppendError('order-1', 'any', cause);
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect(error).toMatchObject({ streamId: 'order-1', code: 'store_unavailable', cause });
    expect(error.message).toContain('No connection established');

    const plain = new Error('14 UNAVAILABLE: No connection established');
    expect(mapAppendError('order-1', 'any', plain)).toMatchObject({ streamId: 'order-1', cause: plain });
    expect(mapReadStreamError('order-1', new UnknownError(undefined, 'boom'))).toBeInstanceOf(StoreUnavailable);
    expect(mapReadAllError(cause)).toBeInstanceOf(StoreUnavailable);
  });

  it('say "unreachable" for the native reader\'s bare UnavailableError', () => {
    const bare = new UnavailableError(undefined, 'UnavailableError');
    expect(mapReadAllError(bare).message).toBe('kurrentdb: read of $all failed: the server is unreachable (UnavailableError)');
  });

  it('an append to a tombstoned stream is refused for good, not reported unavailable nor as a conflict to retry', () => {
    for (const expected of ['any', 'no_stream', 4] as const) {
      const error = mapAppendError('order-1', expected, StreamDeletedError.fromStreamName('order-1'));
      expect(error).toBeInstanceOf(StoreRefused);
      expect(error).toMatchObject({ reason: 'stream_deleted', streamId: 'order-1', code: 'store_refused' });
      expect(error.message).toContain('tombstoned');
    }
  });

  it('stream_exists on a deleted stream is a conflict with no_stream: the server says "deleted" for a soft-deleted stream too', () => {
    const error = mapAppendError('order-1', 'stream_exists', StreamDeletedError.fromStreamName('order-1'));
    expect(error).toBeInstanceOf(WrongExpectedRevision);
    expect(error).toMatchObject({ expected: 'stream_exists', actual: 'no_stream' });
  });

  it('access denied is refused for good, on appends and reads', () => {
    const denied = new AccessDeniedError(undefined, 'Access denied');
    expect(mapAppendError('order-1', 0, denied)).toMatchObject({ constructor: StoreRefused, reason: 'access_denied', streamId: 'order-1', cause: denied });
    expect(mapReadStreamError('order-1', denied)).toMatchObject({ constructor: StoreRefused, reason: 'access_denied' });
    expect(mapReadAllError(denied)).toMatchObject({ constructor: StoreRefused, reason: 'access_denied' });
    expect(mapReadAllError(denied).message).toContain('$admins');
  });

  it('a commit over the server size limits is bad input naming the limit, never unavailable', () => {
    const cases: Array<[unknown, RegExp]> = [
      [MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576), /maxAppendSize of 1048576 bytes/],
      [new AppendRecordSizeExceededError(undefined as never, { stream: 'order-1', recordId: 'r', size: 2_000_000, maxSize: 1_048_576 }), /1048576 bytes for one event/],
      [new TransactionMaxSizeExceededError(undefined as never, { size: 9_000_000, maxSize: 8_388_608 }), /8388608 bytes for one transaction/],
      [new UnknownError(undefined, 'Could not recognize MaximumAppendEventSizeExceeded'), /MaximumAppendEventSizeExceeded/],
    ];
    for (const [cause, message] of cases) {
      const error = mapAppendError('order-1', 'any', cause, 'Placed');
      expect(error).toBeInstanceOf(InvalidEventData);
      expect(error).toMatchObject({ streamId: 'order-1', eventType: 'Placed', path: 'events', code: 'invalid_event_data' });
      expect(error.message).toMatch(message);
    }
  });

  it('only failures that may leave an append written are retried', () => {
    for (const error of [
      new DeadlineExceededError(undefined, 'Deadline exceeded'),
      new TimeoutError(undefined, 'timeout'),
      new UnavailableError(undefined, 'UNAVAILABLE'),
      new CancelledError(undefined, 'cancelled'),
      new Error('Channel closed before call started'),
    ]) {
      expect(worthRetrying(error)).toBe(true);
    }
    for (const error of [
      new AccessDeniedError(undefined, 'no'),
      MaxAppendSizeExceededError.fromMaxAppendSize(1),
      StreamDeletedError.fromStreamName('order-1'),
      new WrongExpectedVersionError(undefined, { streamName: 'order-1', expected: 0n, current: 1n }),
      new UnknownError(undefined, 'Empty eventId provided.'),
    ]) {
      expect(worthRetrying(error)).toBe(false);
    }
    // A timeout (the server's answer to a retry that came before the original was indexed) is unavailable until retried.
    expect(mapAppendError('order-1', 0, new DeadlineExceededError(undefined, 'Deadline exceeded'))).toBeInstanceOf(StoreUnavailable);
  });

  it('a position the server refuses to read from is InvalidPosition; a failure to reach it is not', () => {
    const position = { commit: 5n, prepare: 5n };
    expect(mapPositionCheckError(position, new UnknownError(undefined, 'UnknownError'))).toEqual(new InvalidPosition('5/5'));
    expect(mapPositionCheckError(position, new Error('invalid position'))).toBeInstanceOf(InvalidPosition);
    expect(mapPositionCheckError(position, new UnavailableError(undefined, 'UnavailableError'))).toBeInstanceOf(StoreUnavailable);
    expect(mapPositionCheckError(position, new DeadlineExceededError(undefined, 'Deadline'))).toBeInstanceOf(StoreUnavailable);
    expect(mapPositionCheckError(position, new AccessDeniedError(undefined, 'no'))).toBeInstanceOf(StoreRefused);
  });

  it('a missing or deleted stream reads as StreamNotFound naming it', () => {
    expect(mapReadStreamError('order-1', new StreamNotFoundError(undefined, 'order-1'))).toEqual(new StreamNotFound('order-1'));
    expect(mapReadStreamError('order-1', StreamDeletedError.fromStreamName('order-1'))).toMatchObject({ streamId: 'order-1', code: 'stream_not_found' });
  });

  it('our own errors pass through unchanged', () => {
    const own = new InvalidPosition('x');
    expect(mapAppendError('order-1', 'any', own)).toBe(own);
    expect(mapReadAllError(own)).toBe(own);
  });
});

describe('kurrentdb recorded events', () => {
  const recorded = (extra: Partial<ClientRecordedEvent> = {}): ClientRecordedEvent => ({
    streamId: 'order-1',
    id: '6f9619ff-8b86-d011-b42d-00cf4fc964ff',
    type: 'Placed',
    revision: 3n,
    created: new Date('2025-01-02T03:04:05.678Z'),
    data: { total: 10 },
    metadata: { actor: 'a1' },
    isJson: true,
    position: { commit: 900n, prepare: 850n },
    ...extra,
  });

  it('become port events with a number revision, an ISO time and an opaque position', () => {
    const e = recorded();
    expect(toRecordedEvent(e, e.position!)).toEqual({
      id: '6f9619ff-8b86-d011-b42d-00cf4fc964ff',
      type: 'Placed',
      data: { total: 10 },
      metadata: { actor: 'a1' },
      streamId: 'order-1',
      revision: 3,
      position: '900/850',
      recordedAt: '2025-01-02T03:04:05.678Z',
    });
  });

  it('carry their place in the commit in metadata, which reads do not return', () => {
    const written = withCommitPlace({ actor: 'a1' }, 1, 3);
    expect(written).toEqual({ actor: 'a1', [COMMIT_KEY]: [1, 3] });
    expect(commitPlaceOf(written)).toEqual({ index: 1, size: 3 });
    const e = recorded({ metadata: written });
    expect(toRecordedEvent(e, e.position!).metadata).toEqual({ actor: 'a1' });
    for (const bad of [undefined, {}, { [COMMIT_KEY]: [3, 3] }, { [COMMIT_KEY]: [-1, 2] }, { [COMMIT_KEY]: '0,1' }, { [COMMIT_KEY]: [0.5, 2] }]) {
      expect(commitPlaceOf(bad)).toBeUndefined();
    }
  });

  it('name the append call on the first event of a commit only, so that a copy absorbed by the server is told from the append that stored it', () => {
    const first = withCommitPlace({ actor: 'a1' }, 0, 2, 'call-1');
    const second = withCommitPlace({ actor: 'a1' }, 1, 2, 'call-1');
    expect(first).toEqual({ actor: 'a1', [COMMIT_KEY]: [0, 2, 'call-1'] });
    expect(second).toEqual({ actor: 'a1', [COMMIT_KEY]: [1, 2] });
    expect(commitPlaceOf(first)).toEqual({ index: 0, size: 2, appendId: 'call-1' });
    expect(commitPlaceOf({ [COMMIT_KEY]: [0, 2] })).toEqual({ index: 0, size: 2 });
    const e = recorded({ metadata: first });
    expect(toRecordedEvent(e, e.position!).metadata).toEqual({ actor: 'a1' });
  });

  it('get empty metadata when there is none or it is not a JSON object', () => {
    const position = { commit: 1n, prepare: 1n };
    expect(toRecordedEvent(recorded({ metadata: undefined }), position).metadata).toEqual({});
    expect(toRecordedEvent(recorded({ metadata: new Uint8Array([1, 2]) }), position).metadata).toEqual({});
    expect(toRecordedEvent(recorded({ metadata: [1] }), position).metadata).toEqual({});
  });

  it('system streams and system events are recognised', () => {
    expect(isSystemEvent({ streamId: '$stats-127.0.0.1:2113', type: '$statsCollected' })).toBe(true);
    expect(isSystemEvent({ streamId: '$$order-1', type: '$metadata' })).toBe(true);
    expect(isSystemEvent({ streamId: '$ce-order', type: 'Placed' })).toBe(true);
    expect(isSystemEvent({ streamId: 'order-1', type: '$>' })).toBe(true);
    expect(isSystemEvent({ streamId: 'order-1', type: 'Placed' })).toBe(false);
  });
});

describe('kurrentdb connection strings', () => {
  it('accept the EventStoreDB schemes as kurrentdb', () => {
    expect(normalizeConnectionString('esdb://127.0.0.1:2113?tls=false')).toBe('kurrentdb://127.0.0.1:2113?tls=false');
    expect(normalizeConnectionString(' eventstoredb+discover://u:p@a:2113 ')).toBe('kurrentdb+discover://u:p@a:2113');
    expect(normalizeConnectionString('kurrentdb://127.0.0.1:2113')).toBe('kurrentdb://127.0.0.1:2113');
  });

  it('hide credentials in messages', () => {
    expect(redactConnectionString('kurrentdb://admin:changeit@db:2113?tls=true')).toBe('kurrentdb://***@db:2113?tls=true');
    expect(redactConnectionString('kurrentdb+discover://u:p@a:2113,b:2113')).toBe('kurrentdb+discover://***@a:2113,b:2113');
    expect(redactConnectionString('kurrentdb://127.0.0.1:2113?tls=false')).toBe('kurrentdb://127.0.0.1:2113?tls=false');
  });
});

// No KurrentDB here, but a refused or silent port is real: these exercise the client's own failure paths.
describe('opening kurrentdb without a server', () => {
  let ports: SilentPorts;
  let silentPort: number;
  let closedPort: number;

  beforeAll(async () => {
    ports = await startSilentPorts();
    ({ silentPort, closedPort } = ports);
  });
  afterAll(() => ports.close());

  it('throws StoreUnavailable when nothing listens', async () => {
    const opening = openKurrentDbEventStore({ connectionString: `kurrentdb://127.0.0.1:${closedPort}?tls=false`, openTimeoutMs: 10_000 });
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(opening).rejects.toThrow(`kurrentdb: server at kurrentdb://127.0.0.1:${closedPort}?tls=false did not answer`);
  });

  it('throws StoreUnavailable when the server accepts connections but never answers', async () => {
    const opening = openKurrentDbEventStore({ connectionString: `kurrentdb://127.0.0.1:${silentPort}?tls=false`, openTimeoutMs: 300 });
    await expect(opening).rejects.toThrow(/did not answer: no answer within 300 ms/);
  });

  it('throws StoreUnavailable, without the password, for a connection string it cannot use', async () => {
    const opening = openKurrentDbEventStore({ connectionString: 'http://admin:secret@nowhere' });
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(opening).rejects.not.toThrow(/secret/);
  });
});
