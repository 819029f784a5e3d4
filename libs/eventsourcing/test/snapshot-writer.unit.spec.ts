import type { RecordedEvent } from '@agora/eventstore';
import { SnapshotWriter, type Snapshot, type SnapshotStore } from '../src/index.js';

/** Remembers every save, in order. */
function recordingStore(): SnapshotStore & { saved: Array<[string, unknown]> } {
  const saved: Array<[string, unknown]> = [];
  return { saved, load: async () => undefined, save: async (_name, snapshot: Snapshot) => void saved.push([snapshot.position, snapshot.state]) };
}

const eventAt = (n: number) => ({ id: `e${n}`, type: 'Counted', streamId: 'count-1', revision: n, position: String(n), data: {}, metadata: {} }) as unknown as RecordedEvent;
const codec = { version: 1, encode: (n: number) => n, decode: (saved: unknown) => saved as number };
const silent = { warn: () => undefined };
/** Waits for a save in progress; a save of -1 would show that something was left unsaved. */
const settled = (writer: SnapshotWriter<number>) => writer.save(-1);

describe('SnapshotWriter', () => {
  it('while catching up saves by time only; once caught up saves if the count rule is due, then every N events', async () => {
    const store = recordingStore();
    const writer = new SnapshotWriter(store, 'count', codec, silent, { events: 50, ms: 3_600_000 });
    for (let n = 1; n <= 120; n++) writer.folded(eventAt(n), n);
    expect(store.saved).toEqual([]);
    writer.caughtUp(120);
    await settled(writer);
    expect(store.saved).toEqual([['120', 120]]);
    for (let n = 121; n <= 170; n++) writer.folded(eventAt(n), n);
    await settled(writer);
    expect(store.saved).toEqual([
      ['120', 120],
      ['170', 170],
    ]);
  });

  it('does not save at catch-up when fewer events than the count rule were folded (a restart on a recent snapshot)', async () => {
    const store = recordingStore();
    const writer = new SnapshotWriter(store, 'count', codec, silent, { events: 50, ms: 3_600_000 });
    for (let n = 1; n <= 10; n++) writer.folded(eventAt(n), n);
    writer.caughtUp(10);
    expect(store.saved).toEqual([]);
    await writer.save(10);
    expect(store.saved).toEqual([['10', 10]]);
  });
});
