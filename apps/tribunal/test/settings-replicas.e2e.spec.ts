// Replicas of a service decide under one value of its settings: a proposal process started with
// another tribunal policy than the replica already running refuses to start (exit 2, one line naming
// both values), before it records anything; one started with the same policy joins. Separate
// processes over a NATS server of the test's own, the log in JetStream.
import { settingsStreamId } from '@agora/contracts';
import { DEFAULT_TRIBUNAL_POLICY, defineTribunalPolicy } from '@agora/domain-tribunal';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { settingsDigest } from '@agora/eventsourcing';
import { runToCompletion, startAgoraProcess, startServiceFleet, type ServiceFleet } from '@agora/testing';

const DEMO_POLICY = { minRoundDeadlineMs: 1000 };

describe('replicas started with different settings (e2e)', () => {
  let fleet: ServiceFleet;
  let store: EventStore;

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'settings-replicas', env: () => ({ AGORA_TRIBUNAL_POLICY: JSON.stringify(DEMO_POLICY) }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 60_000);

  it('a second proposal replica with another tribunal policy exits 2 naming both; one with the same policy joins', async () => {
    const first = await fleet.start('proposal');
    const demo = settingsDigest(defineTribunalPolicy(DEMO_POLICY));
    expect(first.output()).toContain(`tribunal settings ${demo}: recorded in settings-tribunal`);

    const other = await runToCompletion('apps/proposal/src/main.ts', [], { ...fleet.env('proposal-2'), AGORA_TRIBUNAL_POLICY: '' }, 60_000);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      new RegExp(`^agora-proposal: another proposal replica \\(\\w+\\) runs with the tribunal settings ${demo}, this one was started with ${settingsDigest(DEFAULT_TRIBUNAL_POLICY)}: every replica of a service must decide under the same settings`, 'm'),
    );
    // Nothing recorded by the refused start: the log still holds the demo's policy alone.
    expect((await store.readStream(settingsStreamId('tribunal'))).map((e) => (e.data as { settings: unknown }).settings)).toEqual([defineTribunalPolicy(DEMO_POLICY)]);

    const same = await startAgoraProcess('apps/proposal/src/main.ts', 'agora-proposal', fleet.env('proposal-3'));
    try {
      expect(same.output()).toContain(`tribunal settings ${demo}: as the log holds them`);
    } finally {
      await same.stop();
    }
  }, 120_000);
});
