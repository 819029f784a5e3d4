// The seed's test debate as an operator runs it: the registry, the debate service and the
// projections as separate processes over a NATS server of the test's own, the log in JetStream.
// Saylor and Hayes are registered debaters sending signed moves over NATS; every process is killed
// in the middle of CRUX_LOCK (after the first failed lock) and started again; the debate goes on
// to CONVERGED with the seed's ThreadCrux, and the moderator's interventions are in the log once each.
import { GetDebate, ListDebates, ModerateDebate, OpenDebate, PostDebateMove, type DebateView } from '@agora/contracts';
import { debateStreamId, EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf } from '@agora/domain-debate';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { startServiceFleet, waitFor, type CommandRef, type ServiceFleet } from '@agora/testing';

const SERVICES = ['registry', 'debate', 'projections'] as const;
const DEBATE = 'btc-digital-gold';

describe('the crux debate over separate processes (e2e)', () => {
  let fleet: ServiceFleet;
  let store: EventStore;

  const send = (agent: string, command: CommandRef, payload: Record<string, unknown>) => fleet.send(agent, command, payload);
  const ok = (agent: string, command: CommandRef, payload: Record<string, unknown>) => fleet.ok(agent, command, payload);
  const debate = () => fleet.query<DebateView>(GetDebate.subject, { debateId: DEBATE });
  const debateWhen = (check: (d: DebateView) => boolean, what: string) => fleet.until(debate, check, what, 20_000);
  const script = exampleScript();
  const playSteps = async (from: number, to: number) => {
    for (const step of script.slice(from, to)) {
      const d = await debate();
      await ok(step.agentId, PostDebateMove, { debateId: DEBATE, threadId: 'main', move: moveOf(step, d) });
    }
  };

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'debate', env: () => ({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    await Promise.all(SERVICES.map((name) => fleet.start(name)));
    await fleet.register({ saylor: { roles: ['debater'], trustScore: 500 }, hayes: { roles: ['debater'], trustScore: 500 }, outsider: { roles: ['observer'], trustScore: 500 } });
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 60_000);

  it("plays the seed's debate to a validated crux, losing nothing to a SIGKILL of every process in CRUX_LOCK", async () => {
    // Participants must be registered debaters; an observer may not move.
    await waitFor(async () => (await send('saylor', OpenDebate, { debateId: 'probe', topic: 't', participants: EXAMPLE_PARTICIPANTS })).ok, 'the debate service to know the debaters', 20_000);
    expect(await send('saylor', OpenDebate, { debateId: 'bad', topic: 't', participants: [EXAMPLE_PARTICIPANTS[0], { agentId: 'outsider', persona: 'x' }] })).toMatchObject({
      ok: false,
      error: { code: 'invalid_command', message: expect.stringMatching(/outsider \(roles: observer\)/) },
    });
    // The seed's own CRUX_LOCK budget (6-8), set explicitly, so that two locks fail before the third
    // holds and the restarted moderator has forced binary framing to do (two agents' derived 8-10
    // would lock on the second attempt).
    const settings = { cruxLock: { min: 6, max: 8 } };
    expect(await ok('saylor', OpenDebate, { debateId: DEBATE, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS, settings })).toMatchObject({ events: ['DebateOpened'] });
    expect(await send('outsider', PostDebateMove, { debateId: DEBATE, move: { kind: 'CLAIM', text: 'hi' } })).toMatchObject({ ok: false, error: { code: 'forbidden' } });

    // DISCOVERY: a CHALLENGE is refused, naming the stage and the moves allowed.
    expect(await send('hayes', PostDebateMove, { debateId: DEBATE, move: { kind: 'CHALLENGE', target: 'saylor', text: 'no' } })).toMatchObject({
      ok: false,
      error: { code: 'illegal_state', details: { stage: 'DISCOVERY', allowed: ['CLAIM', 'QUESTION', 'PROPOSE_QUESTION', 'ACCEPT_QUESTION'] } },
    });
    await playSteps(0, 6);
    expect((await debate()).threads[0]!.stage).toBe('CRUX_LOCK');
    await playSteps(6, 12); // the first lock attempt fails (an INCOMPLETE steelman, no falsifiers)
    const failed = await debateWhen((d) => d.threads[0]!.interventions.length === 1, 'the moderator to answer the failed lock');
    expect(failed.threads[0]!.interventions[0]).toMatchObject({ kind: 'lock_prompt', ref: 1, text: expect.stringMatching(/falsifiers: saylor, hayes must declare one/) });
    // Only the debate service moderates: an agent's ModerateDebate is refused at the gate.
    expect(await send('saylor', ModerateDebate, { debateId: DEBATE, threadId: 'main', intervention: { kind: 'forced_binary', attempt: 1 } })).toMatchObject({ ok: false, error: { code: 'service_only' } });
    const before = await debate();

    // Every process goes down hard and comes back.
    await Promise.all([...fleet.processes.values()].map((p) => p.kill()));
    await Promise.all(SERVICES.map((name) => fleet.start(name)));
    expect(await debate()).toEqual(before);

    await playSteps(12, 14); // the second lock fails: the moderator (restarted, from its checkpoint) prompts and forces binary framing
    await debateWhen((d) => d.threads[0]!.interventions.length === 3, 'the moderator to answer the second failed lock');
    await playSteps(14, script.length);
    const done = await debateWhen((d) => d.status === 'complete', 'the debate to complete');
    expect(done.threads[0]!.stage).toBe('CONVERGED');
    expect(done).toMatchObject({ outcome: 'converged', primaryThreadId: 'main' });
    expect(done.threads[0]!.crux).toMatchObject({ validated: true, positions: { saylor: { side: 'YES' }, hayes: { side: 'NO' } } });
    expect(done.threads[0]!.concessions).toEqual([expect.objectContaining({ agentId: 'saylor', topClaimChanged: false })]);

    // Nothing twice across the crash: three lock attempts, the moderator's three interventions once each, by the service.
    const events = await store.readStream(debateStreamId(DEBATE));
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'CruxLockAttempted')).toHaveLength(3);
    const interventions = events.filter((e) => e.type === 'ModeratorIntervened');
    expect(interventions.map((e) => (e.data as { kind: string }).kind)).toEqual(['lock_prompt', 'lock_prompt', 'forced_binary']);
    expect(interventions.every((e) => e.metadata['actor'] === 'service:debate' && typeof e.metadata['signature'] === 'string')).toBe(true);
    expect(types.filter((t) => t === 'DebateCompleted')).toHaveLength(1);
    // The metrics, from the projections' read model (restarted too: rebuilt from the log).
    const metricsUrl = /metrics: (http:\/\/\S+\/metrics)/.exec(fleet.processes.get('projections')!.output())![1]!;
    let metrics = '';
    await waitFor(async () => /agora_debate_completed_debates_total\{outcome="converged"\} 1/.test((metrics = await (await fetch(metricsUrl)).text())), 'the projections to count the debate', 20_000);
    for (const line of [
      'agora_debate_lock_attempts_total{result="passed"} 1',
      'agora_debate_lock_attempts_total{result="failed"} 2',
      'agora_debate_first_time_accurate_ratio 0.5',
      'agora_debate_moderator_interventions_total{kind="lock_prompt"} 2',
      'agora_debate_moderator_interventions_total{kind="forced_binary"} 1',
      'agora_debate_cheap_concessions_total 1',
      'agora_debate_duration_seconds_count 1',
      'agora_debate_open_debates 1', // the probe
    ]) expect(metrics).toContain(line);
    const listed = await fleet.query<{ debates: { debateId: string; outcome: string }[] }>(ListDebates.subject, { status: 'complete' });
    expect(listed).toMatchObject({ debates: [expect.objectContaining({ debateId: DEBATE, outcome: 'converged' })] });
  }, 240_000);
});
