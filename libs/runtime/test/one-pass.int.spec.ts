// A process starts its parts while the agent directory catches up (runProcess): the directory, a
// read model, a reactor and a deadline scheduler started together read the log once, and the
// reactor reads the directory as of the event it handles.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { FileCheckpointStore, ProjectionRunner, sharingCatchUp, type Projection } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { RegistryDirectory, runDeadlines, runReactor, startTogether, type Running } from '../src/index.js';

const AGENTS = 40;
const PROPOSALS = 30;

const proposalCount: Projection<{ n: number }> = {
  name: 'proposal-count',
  categories: ['proposal'],
  initial: () => ({ n: 0 }),
  apply: (model) => ({ n: model.n + 1 }),
};

describe('parts started together with the agent directory', () => {
  let dir: string;
  let inner: EventStore;
  let store: EventStore;
  let readAlls: number;
  const as = { service: 'registry' as const, actor: 'service:registry', roles: ['service'], ...generateKeyPair() };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-one-pass-'));
    inner = await openEmbeddedEventStore({ directory: dir });
    for (let i = 0; i < AGENTS; i++) {
      const agentId = `a${i}`;
      const data = { agentId, publicKey: generateKeyPair().publicKey, displayName: agentId, roles: ['reviewer'], constitutions: [], specializations: [], trustScore: 500, health: 100, risk: 0, registeredAt: new Date().toISOString() };
      await inner.append(`agent-${agentId}`, [{ id: randomUUID(), type: 'AgentRegistered', data, metadata: {} }], 'no_stream');
    }
    for (let i = 0; i < PROPOSALS; i++) await inner.append(`proposal-p${i}`, [{ id: randomUUID(), type: 'Noted', data: { i }, metadata: {} }], 'any');
    readAlls = 0;
    store = sharingCatchUp({
      get kind() {
        return inner.kind;
      },
      append: (s, e, x) => inner.append(s, e, x),
      readStream: (s, o) => inner.readStream(s, o),
      readAll: (o) => (readAlls++, inner.readAll(o)),
      headPosition: () => inner.headPosition(),
      comparePositions: (a, b) => inner.comparePositions(a, b),
      subscribe: (o) => inner.subscribe(o),
      close: () => inner.close(),
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('catch up in one read of the log; the reactor sees the directory as of each event', async () => {
    const registry = new RegistryDirectory(store);
    const directoryUp = registry.start();
    const known: number[] = [];
    const runner = new ProjectionRunner(store, proposalCount);
    const context = { store, checkpoints: new FileCheckpointStore(join(dir, 'checkpoints')) };
    const running: Running = await startTogether([
      async () => {
        await runner.start();
        return { close: () => runner.stop() };
      },
      () =>
        runReactor(context, {
          name: 'counting',
          as,
          categories: ['proposal'],
          react: () => {
            known.push(registry.list().length);
            return [];
          },
          logger: { warn: () => undefined },
        }),
      () => runDeadlines(context, { name: 'none', as, categories: ['proposal'], deadlineOf: () => undefined, expire: () => undefined, logger: { warn: () => undefined } }),
    ]);
    await directoryUp;
    try {
      expect(readAlls).toBe(1);
      expect(registry.list()).toHaveLength(AGENTS);
      expect(runner.model.n).toBe(PROPOSALS);
      // Every proposal event comes after the registrations: the reactor saw them all.
      expect(known).toEqual(Array.from({ length: PROPOSALS }, () => AGENTS));
    } finally {
      await running.close();
      await registry.stop();
    }
  });
});
