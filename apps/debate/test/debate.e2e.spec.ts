// The seed's test debate as an operator runs it: the registry, the debate service and the
// projections as separate processes over a NATS server of the test's own, the log in JetStream.
// Saylor and Hayes are registered debaters sending signed moves over NATS; every process is killed
// in the middle of CRUX_LOCK (after the first failed lock) and started again; the debate goes on
// to CONVERGED with the seed's ThreadCrux, and the moderator's interventions are in the log once each.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandByType, GetDebate, ListDebates, ModerateDebate, OpenDebate, PostDebateMove, type CommandDefinition, type DebateView, type Reply } from '@agora/contracts';
import { debateStreamId, EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript, moveOf } from '@agora/domain-debate';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import { startAgoraProcess, startNatsServer, uniqueJetStreamLog, waitFor, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';

const SERVICES = [
  { name: 'registry', entry: 'apps/registry/src/main.ts' },
  { name: 'debate', entry: 'apps/debate/src/main.ts' },
  { name: 'projections', entry: 'apps/projections/src/main.ts' },
] as const;
type ServiceName = (typeof SERVICES)[number]['name'];
const DEBATERS = ['saylor', 'hayes'] as const;
const DEBATE = 'btc-digital-gold';

describe('the crux debate over separate processes (e2e)', () => {
  let nats: PrivateNatsServer;
  let log: ReturnType<typeof uniqueJetStreamLog>;
  const root = generateKeyPair();
  const keys = Object.fromEntries(DEBATERS.map((a) => [a, generateKeyPair()])) as Record<string, KeyPair>;
  const processes = new Map<ServiceName, AgoraProcess>();
  let dir: string;
  let client: NatsAgoraClient;
  let store: EventStore;

  const start = async (name: ServiceName) => {
    const service = SERVICES.find((s) => s.name === name)!;
    processes.set(name, await startAgoraProcess(service.entry, `agora-${name}`, { NATS_URL: nats.url, EVENT_STORE: log.eventStore, AGORA_DATA_DIR: join(dir, name), AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' }));
  };
  const send = (agent: string, definition: Pick<CommandDefinition, 'type' | 'subject'>, payload: Record<string, unknown>) =>
    client.request(definition.subject, createSignedCommand({ type: definition.type, actor: agent, payload, secretKey: (agent === 'root' ? root : keys[agent]!).secretKey }), { timeoutMs: 10_000 });
  const ok = async (agent: string, definition: Pick<CommandDefinition, 'type' | 'subject'>, payload: Record<string, unknown>) => {
    const reply = await send(agent, definition, payload);
    if (!reply.ok) throw new Error(`${agent} ${definition.type}: ${reply.error.code} ${reply.error.message}`);
    return reply.result as { events: string[] };
  };
  const debate = async (): Promise<DebateView> => {
    const reply = (await client.request(GetDebate.subject, { debateId: DEBATE }, { timeoutMs: 10_000 })) as Reply<DebateView>;
    if (!reply.ok) throw new Error(`${reply.error.code} ${reply.error.message}`);
    return reply.result;
  };
  const debateWhen = async (check: (d: DebateView) => boolean, what: string) => {
    let last: DebateView | undefined;
    await waitFor(async () => check((last = await debate())), what, 20_000);
    return last!;
  };
  const script = exampleScript();
  const playSteps = async (from: number, to: number) => {
    for (const step of script.slice(from, to)) {
      const d = await debate();
      await ok(step.agentId, PostDebateMove, { debateId: DEBATE, threadId: 'main', move: moveOf(step, d) });
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-debate-e2e-'));
    nats = await startNatsServer();
    log = uniqueJetStreamLog('debate', nats.url);
    store = await openJetStreamEventStore({ servers: nats.url, streamName: log.streamName, subjectPrefix: log.subjectPrefix });
    client = await NatsAgoraClient.connect({ servers: nats.url, name: 'debate-e2e' });
    await Promise.all(SERVICES.map((s) => start(s.name)));
    for (const agentId of [...DEBATERS, 'outsider']) {
      keys[agentId] ??= generateKeyPair();
      await ok('root', commandByType('RegisterAgent')!, { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles: agentId === 'outsider' ? ['observer'] : ['debater'], constitutions: [], trustScore: 500 });
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...processes.values()].map((p) => p.stop()));
    await client?.close();
    await store?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
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
    await Promise.all([...processes.values()].map((p) => p.kill()));
    await Promise.all(SERVICES.map((s) => start(s.name)));
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
    const metricsUrl = /metrics: (http:\/\/\S+\/metrics)/.exec(processes.get('projections')!.output())![1]!;
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
    const listed = (await client.request(ListDebates.subject, { status: 'complete' }, { timeoutMs: 10_000 })) as Reply<{ debates: { debateId: string; outcome: string }[] }>;
    expect(listed).toMatchObject({ ok: true, result: { debates: [expect.objectContaining({ debateId: DEBATE, outcome: 'converged' })] } });
  }, 240_000);
});
