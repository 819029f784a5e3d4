// Late deadlines give the next phase its full time: a chain of phases (each opened with a deadline
// `phaseMs` after it opens) on the real embedded store, its deadlines run by runDeadlines, and an
// outage longer than a phase in the middle. After the restart, the late expiry is decided at the
// time it fires (recording both times), and the phase it opens gets its whole duration from then,
// instead of starting in the past and expiring at once.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { handleCommand } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { waitFor } from '@agora/testing';
import { ProcessMetrics, runDeadlines, type Running } from '../src/index.js';

const PHASE_MS = 1_000;
const OUTAGE_MS = 3_000; // longer than a phase: the old behaviour would skip the next phase entirely

// The expiry borrows a real service command (the voting service may issue it on its own behalf).
type PhaseCommand = Command<'Open', Record<string, never>> | Command<'ExpireVotingSession', { sessionId: string }>;
type PhaseEvent = DomainEvent<'PhaseOpened', { phase: number; openedAt: string; deadlineAt: string }> | DomainEvent<'PhaseExpired', { phase: number; deadlineAt: string; expiredAt: string }>;
interface PhaseState {
  phase: number;
  deadlineAt: string | null;
}

/** Phases 1 to 3, each opened by the expiry of the one before, with `PHASE_MS` from when it opens. */
const phases: Decider<PhaseCommand, PhaseEvent, PhaseState> = {
  initialState: () => ({ phase: 0, deadlineAt: null }),
  evolve: (s, e) => (e.type === 'PhaseOpened' ? { phase: e.data.phase, deadlineAt: e.data.deadlineAt } : { ...s, deadlineAt: null }),
  decide: (c, s) => {
    const open = (phase: number): PhaseEvent => ({ type: 'PhaseOpened', data: { phase, openedAt: c.context.now, deadlineAt: new Date(Date.parse(c.context.now) + PHASE_MS).toISOString() } });
    if (c.type === 'Open') return s.phase === 0 ? [open(1)] : [];
    if (s.deadlineAt === null) return [];
    if (Date.parse(c.context.now) < Date.parse(s.deadlineAt)) throw new DomainError('illegal_state', 'not yet due');
    const expired: PhaseEvent = { type: 'PhaseExpired', data: { phase: s.phase, deadlineAt: s.deadlineAt, expiredAt: c.context.now } };
    return s.phase < 3 ? [expired, open(s.phase + 1)] : [expired];
  },
};

describe('late deadlines (runDeadlines, embedded store)', () => {
  let dir: string;
  let store: EventStore;
  let running: Running | undefined;
  const metrics = new ProcessMetrics({ defaultMetrics: false });
  /** agora_deadline_lateness_seconds of the scheduler: how many fired, and their lateness summed. */
  const lateness = async () => {
    const values = (await metrics.registry.getSingleMetric('agora_deadline_lateness_seconds')!.get()).values.filter((v) => v.labels['scheduler'] === 'phases');
    const of = (name: string) => values.find((v) => (v as { metricName?: string }).metricName === name)?.value ?? 0;
    return { count: of('agora_deadline_lateness_seconds_count'), sum: of('agora_deadline_lateness_seconds_sum') };
  };
  const start = async () => {
    running = await runDeadlines(
      { store, metrics },
      {
        name: 'phases',
        as: { service: 'voting', actor: 'service:voting', roles: ['service'], ...generateKeyPair() },
        categories: ['phase'],
        deadlineOf: (e: RecordedEvent) => (e.type === 'PhaseOpened' ? { key: `${e.streamId}:${(e.data as { phase: number }).phase}`, dueAt: (e.data as { deadlineAt: string }).deadlineAt } : e.type === 'PhaseExpired' ? { cancel: `${e.streamId}:${(e.data as { phase: number }).phase}` } : undefined),
        expire: (key) => ({ streamId: key.split(':')[0]!, decider: phases, type: 'ExpireVotingSession', payload: { sessionId: key.split(':')[0]! } }),
        logger: { warn: () => undefined },
      },
    );
  };
  const events = async () => (await store.readStream('phase-1')).map((e) => e.data as Record<string, string | number>);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-deadlines-'));
    store = await openEmbeddedEventStore({ directory: dir });
  });
  afterAll(async () => {
    await running?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('after an outage longer than a phase, the late expiry records when it was due and when it was decided, and the next phase gets its whole duration', async () => {
    const now = new Date().toISOString();
    const commandId = randomUUID();
    await handleCommand({ store, decider: phases, streamId: 'phase-1', command: { type: 'Open', payload: {}, context: { now, actor: 'alice', actorRoles: [], commandId } }, metadata: { commandId, commandType: 'Open', actor: 'alice', issuedAt: now } });
    // Down before phase 1 is due, and for longer than a phase after.
    const [phase1] = await events();
    const restartAt = Date.parse(phase1!['deadlineAt'] as string) + OUTAGE_MS;
    await new Promise((resolve) => setTimeout(resolve, restartAt - Date.now()));
    const restartedAt = Date.now();
    await start();
    await waitFor(async () => (await events()).some((e) => e['phase'] === 1 && 'expiredAt' in e), 'the late expiry of phase 1', 10_000);

    const [, expired1, opened2] = await events();
    expect(expired1).toMatchObject({ phase: 1, deadlineAt: phase1!['deadlineAt'] });
    const lateBy = Date.parse(expired1!['expiredAt'] as string) - Date.parse(expired1!['deadlineAt'] as string);
    expect(lateBy).toBeGreaterThanOrEqual(OUTAGE_MS - 100);
    // Phase 2 opens when the expiry was decided and runs its whole PHASE_MS from then.
    expect(opened2).toMatchObject({ phase: 2, openedAt: expired1!['expiredAt'] });
    expect(Date.parse(opened2!['deadlineAt'] as string) - Date.parse(opened2!['openedAt'] as string)).toBe(PHASE_MS);
    expect(Date.parse(opened2!['deadlineAt'] as string)).toBeGreaterThan(restartedAt);
    // And it is still open a moment after the restart (it did not expire "in the past").
    expect((await events()).filter((e) => 'expiredAt' in e)).toHaveLength(1);
    // The lateness is in the process metrics (seconds).
    const late = await lateness();
    expect(late.count).toBe(1);
    expect(late.sum).toBeGreaterThanOrEqual((OUTAGE_MS - 100) / 1000);

    // Then phase 2 expires on time, a whole phase later.
    await waitFor(async () => (await events()).some((e) => e['phase'] === 2 && 'expiredAt' in e), 'the expiry of phase 2', 10_000);
    const expired2 = (await events()).find((e) => e['phase'] === 2 && 'expiredAt' in e)!;
    expect(Date.parse(expired2['expiredAt'] as string) - Date.parse(opened2!['openedAt'] as string)).toBeGreaterThanOrEqual(PHASE_MS);
    const onTime = await lateness();
    expect(onTime.count).toBe(2);
    expect(onTime.sum - late.sum).toBeLessThan(1);
  }, 60_000);
});
