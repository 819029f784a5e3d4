/**
 * upcastingStore over the real embedded store: events an older release wrote (version 1, no
 * `schemaVersion` in their metadata) come out of readStream, readAll and subscribe in today's shape
 * (version 2 of a test event type), their stored form in `written`; an event of a version this
 * build does not know is refused by name, never delivered as something it is not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnknownEventVersion, type VersionedEvent } from '@agora/contracts';
import { openEmbeddedEventStore } from '../src/embedded/embedded-store.js';
import type { EventStore, RecordedEvent } from '../src/port.js';
import { upcastingStore, upcastRecorded } from '../src/upcasting.js';

/** Version 1 had `amount` in cents; version 2 has `total` in whole units and the `currency`. */
const Paid: VersionedEvent = {
  type: 'TestPaid',
  version: 2,
  upcasters: [(data) => ({ total: (data as { amount: number }).amount / 100, currency: 'EUR' })],
};
const versions = (type: string) => (type === Paid.type ? Paid : undefined);

const v1 = (amount: number, extra: Record<string, unknown> = {}) => ({ type: 'TestPaid', data: { amount }, metadata: { actor: 'old-release', ...extra } });

describe('upcastingStore (embedded store)', () => {
  let directory: string;
  let raw: EventStore;
  let store: EventStore;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'agora-upcasting-'));
    raw = await openEmbeddedEventStore({ directory });
    store = upcastingStore(raw, versions);
    // What an older release wrote: version 1 without a version, and another type the contracts do not know.
    await raw.append('order-1', [v1(1250), { type: 'TestShipped', data: { carrier: 'post' }, metadata: { actor: 'old-release' } }], 'no_stream');
    // What this release writes: version 2, stamped.
    await raw.append('order-1', [{ type: 'TestPaid', data: { total: 3, currency: 'CHF' }, metadata: { actor: 'new-release', schemaVersion: 2 } }], 1);
  });

  afterAll(async () => {
    await raw.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it("reads an older version in today's shape, with the version it now has and the stored form beside it", async () => {
    const [old, shipped, current] = await store.readStream('order-1');
    expect(old).toMatchObject({ type: 'TestPaid', data: { total: 12.5, currency: 'EUR' }, metadata: { actor: 'old-release', schemaVersion: 2 }, written: { data: { amount: 1250 }, metadata: { actor: 'old-release' } } });
    expect(shipped).toMatchObject({ type: 'TestShipped', data: { carrier: 'post' }, metadata: { actor: 'old-release' } });
    expect(shipped!.written).toBeUndefined();
    expect(current).toMatchObject({ data: { total: 3, currency: 'CHF' }, metadata: { schemaVersion: 2 } });
    expect(current!.written).toBeUndefined();
    // The store itself still holds what was written.
    expect((await raw.readStream('order-1'))[0]).toMatchObject({ data: { amount: 1250 }, metadata: { actor: 'old-release' } });
  });

  it('readAll and subscribe deliver the same upcast events in the same order', async () => {
    const read: RecordedEvent[] = [];
    for await (const e of store.readAll()) read.push(e);
    const delivered: RecordedEvent[] = [];
    const subscription = store.subscribe({ name: 'test', handler: (e) => void delivered.push(e) });
    await subscription.caughtUp;
    await subscription.stop();
    expect(read.map((e) => e.data)).toEqual([{ total: 12.5, currency: 'EUR' }, { carrier: 'post' }, { total: 3, currency: 'CHF' }]);
    expect(delivered).toEqual(read);
  });

  it('upcasting again what was upcast gives the same event (it starts from the stored form)', async () => {
    const [old] = await store.readStream('order-1');
    expect(upcastRecorded(old!, versions)).toEqual(old);
  });

  it('an event of a version this build does not know is refused by name: readStream throws, a subscription retries it and never skips it', async () => {
    const newer = mkdtempSync(join(tmpdir(), 'agora-upcasting-'));
    const rawNewer = await openEmbeddedEventStore({ directory: newer });
    try {
      await rawNewer.append('order-9', [{ type: 'TestPaid', data: { total: 1, currency: 'EUR', vat: 0.2 }, metadata: { actor: 'newer-release', schemaVersion: 3 } }], 'no_stream');
      const reading = upcastingStore(rawNewer, versions);
      await expect(reading.readStream('order-9')).rejects.toThrow(UnknownEventVersion);
      await expect(reading.readStream('order-9')).rejects.toThrow('TestPaid version 3 is not one this release reads (it knows versions 1 to 2)');
      const errors: unknown[] = [];
      const handled: RecordedEvent[] = [];
      const subscription = reading.subscribe({ handler: (e) => void handled.push(e), onError: (error) => void errors.push(error), retry: { initialDelayMs: 5, maxDelayMs: 5 } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await subscription.stop();
      expect(handled).toEqual([]);
      expect(errors.length).toBeGreaterThan(1);
      expect(errors[0]).toBeInstanceOf(UnknownEventVersion);
    } finally {
      await rawNewer.close();
      rmSync(newer, { recursive: true, force: true });
    }
  });
});
