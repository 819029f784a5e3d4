import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore, type ReadStreamOptions } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { commandDirectory, RegistryDirectory } from '../src/index.js';

/** The embedded store, with every readStream call recorded. */
function recordingReads(inner: EventStore): { store: EventStore; reads: string[] } {
  const reads: string[] = [];
  const store: EventStore = {
    kind: inner.kind,
    append: (streamId, events, expected) => inner.append(streamId, events, expected),
    readStream: (streamId: string, options?: ReadStreamOptions) => {
      reads.push(streamId);
      return inner.readStream(streamId, options);
    },
    readAll: (options) => inner.readAll(options),
    headPosition: () => inner.headPosition(),
    comparePositions: (a, b) => inner.comparePositions(a, b),
    subscribe: (options) => inner.subscribe(options),
    close: () => inner.close(),
  };
  return { store, reads };
}

function registration(agentId: string, publicKey: string) {
  return {
    type: 'AgentRegistered',
    data: { agentId, publicKey, displayName: agentId, roles: ['operator'], constitutions: [], specializations: [], trustScore: 500, health: 100, risk: 0, registeredAt: new Date().toISOString() },
  };
}

async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('RegistryDirectory', () => {
  let dir: string;
  let inner: EventStore;
  let store: EventStore;
  let reads: string[];
  let clock: number;
  let directory: RegistryDirectory;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-directory-'));
    inner = await openEmbeddedEventStore({ directory: dir });
    ({ store, reads } = recordingReads(inner));
    clock = 1_000_000;
    directory = new RegistryDirectory(store, { unknownTtlMs: 5_000, now: () => clock });
    await directory.start();
  });
  afterEach(async () => {
    await directory.stop();
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the stream of an id the live model does not know, then takes it as unknown for the TTL', async () => {
    expect(await directory.get('ghost')).toBeUndefined();
    expect(await directory.get('ghost')).toBeUndefined();
    clock += 4_999;
    expect(await directory.get('ghost')).toBeUndefined();
    expect(reads).toEqual(['agent-ghost']);
    clock += 1;
    expect(await directory.get('ghost')).toBeUndefined();
    expect(reads).toEqual(['agent-ghost', 'agent-ghost']);
  });

  it('shares one read among concurrent asks for one id', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => directory.get('nobody')));
    expect(answers.every((a) => a === undefined)).toBe(true);
    expect(reads).toEqual(['agent-nobody']);
  });

  it('knows an agent registered after a negative answer as soon as its live model has it, TTL or not', async () => {
    expect(await directory.get('late')).toBeUndefined();
    const key = generateKeyPair().publicKey;
    await store.append('agent-late', [registration('late', key)], 'no_stream');
    await eventually(() => directory.list().some((a) => a.agentId === 'late'), 'the model to have the agent');
    expect(await directory.get('late')).toMatchObject({ publicKey: key, status: 'active' });
    expect(reads).toEqual(['agent-late']);
  });

  it('reads the stream of an agent registered before the model has it (no earlier negative answer)', async () => {
    await directory.stop();
    const key = generateKeyPair().publicKey;
    await store.append('agent-fresh', [registration('fresh', key)], 'no_stream');
    expect(await directory.get('fresh')).toMatchObject({ publicKey: key });
    expect(reads).toEqual(['agent-fresh']);
  });

  it('reads every time with unknownTtlMs 0', async () => {
    const eager = new RegistryDirectory(store, { unknownTtlMs: 0 });
    await eager.get('ghost');
    await eager.get('ghost');
    expect(reads).toEqual(['agent-ghost', 'agent-ghost']);
    expect(() => new RegistryDirectory(store, { unknownTtlMs: -1 })).toThrow(RangeError);
  });

  it('answers for an agent only once its model has caught up, never from an older record it holds meanwhile', async () => {
    await store.append('agent-slow', [registration('slow', generateKeyPair().publicKey), { type: 'AgentDisabled', data: { agentId: 'slow', reason: 'retired', disabledAt: new Date().toISOString() } }], 'no_stream');
    // Catch-up held right after the registration: the model has the agent, still active.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding: EventStore = {
      ...store,
      subscribe: (options) =>
        store.subscribe({
          ...options,
          handler: async (event) => {
            await options.handler(event);
            if (event.type === 'AgentRegistered' && event.streamId === 'agent-slow') await held;
          },
        }),
    };
    const catching = new RegistryDirectory(holding);
    const started = catching.start();
    await eventually(() => catching.list().some((a) => a.agentId === 'slow'), 'the model to hold the registration');
    let answer: unknown = 'none yet';
    const asked = catching.get('slow').then((record) => (answer = record));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answer).toBe('none yet');
    release();
    await started;
    await asked;
    expect(answer).toMatchObject({ status: 'disabled' });
    await catching.stop();
  });

  describe('commandDirectory', () => {
    it('answers for a bootstrap operator with one read per TTL, and lets the registry win once it knows the id', async () => {
      const configured = generateKeyPair().publicKey;
      const gate = commandDirectory(directory, [{ agentId: 'root', publicKey: configured }]);
      for (let i = 0; i < 50; i++) expect(await gate.get('root')).toMatchObject({ publicKey: configured, roles: ['operator'], status: 'active' });
      expect(reads).toEqual(['agent-root']);

      const registered = generateKeyPair().publicKey;
      await store.append('agent-root', [registration('root', registered), { type: 'AgentDisabled', data: { agentId: 'root', reason: 'rotated out', disabledAt: new Date().toISOString() } }], 'no_stream');
      await eventually(async () => (await gate.get('root'))?.publicKey === registered, "the registry's record to win");
      expect(await gate.get('root')).toMatchObject({ publicKey: registered, status: 'disabled' });
    });
  });
});
