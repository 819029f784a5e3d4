import { WrongExpectedRevision } from '../src/errors.js';
import { appendBatch, type BatchContext, type BatchPart } from '../src/jetstream/append-many.js';
import type { BatchMessage, PubAck } from '../src/jetstream/pub-acks.js';
import type { StreamState } from '../src/jetstream/stream-state.js';

// A copy of a batch racing another: JetStream refuses ours (10201, a message id already stored), and the
// leader reads that follow are one request per stream, so one of them may be taken while the winner's
// batch is being applied and show only part of it.
const parts: BatchPart[] = [
  { streamId: 'res-1', subject: 'agora.es.res-1', eventsJson: '[]', count: 1, expected: 'no_stream', commitId: 'c-res' },
  { streamId: 'agg-1', subject: 'agora.es.agg-1', eventsJson: '[]', count: 2, expected: 'no_stream', commitId: 'c-agg' },
];
const ABSENT: StreamState = { lastRevision: -1, lastSeq: 0, lastIndex: -1, commitId: undefined };
const STORED: Record<string, StreamState> = {
  'res-1': { lastRevision: 0, lastSeq: 41, lastIndex: 0, commitId: 'c-res' },
  'agg-1': { lastRevision: 1, lastSeq: 42, lastIndex: 1, commitId: 'c-agg' },
};

/** A store whose leader reads answer from `views` in turn (the last one from then on), each a map of stream to state. */
function context(views: Array<Record<string, StreamState>>): BatchContext & { reads: number; published: BatchMessage[][] } {
  const ctx = {
    reads: 0,
    published: [] as BatchMessage[][],
    requestTimeoutMs: 2_000,
    known: () => undefined,
    remember: () => undefined,
    forget: () => undefined,
    readLastCommit: async (streamId: string) => {
      const view = views[Math.min(Math.floor(ctx.reads++ / parts.length), views.length - 1)]!;
      return view[streamId] ?? ABSENT;
    },
    publishBatch: async (_id: string, messages: readonly BatchMessage[]): Promise<PubAck> => {
      ctx.published.push([...messages]);
      return { kind: 'refused', errCode: 10201, description: 'batch duplicate message id' };
    },
  };
  return ctx;
}

describe('appendBatch, a copy that lost the race', () => {
  it('answers alreadyStored when a read showed the winning batch only in part', async () => {
    const ctx = context([{ 'agg-1': STORED['agg-1']! }, STORED]);
    const results = await appendBatch(ctx, parts);
    expect(results).toEqual([
      { nextExpectedRevision: 0, position: expect.any(String), alreadyStored: true },
      { nextExpectedRevision: 1, position: expect.any(String), alreadyStored: true },
    ]);
    expect(ctx.published).toHaveLength(1);
  });

  it('calls a commit stored beside one that stays unstored a conflict, after a few reads, writing nothing more', async () => {
    const ctx = context([{ 'agg-1': STORED['agg-1']! }]);
    const error = await appendBatch(ctx, parts).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WrongExpectedRevision);
    expect(error).toMatchObject({ streamId: 'agg-1', expected: 'no_stream', actual: 1 });
    expect(ctx.published).toHaveLength(1);
    expect(ctx.reads / parts.length).toBeGreaterThan(1);
  });
});
