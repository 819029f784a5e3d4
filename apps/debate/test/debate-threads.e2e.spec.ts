// A debate of several threads as an operator runs it: the registry and the debate service as
// separate processes over a NATS server of the test's own, the log in JetStream. The debaters are
// personas played by models (the LLM runner, in this process, sending signed moves over NATS), the
// models being the provider stand-ins at the network boundary (OpenAI's and Anthropic's wire APIs).
// A model proposes a thread (its duplicate proposal refused first, and retried with the refusal) and
// the other seconds it (the second bite), the models' duplicate questions merge threads, and the
// debate completes with its coalitions and common ground.
import { GetDebate, OpenDebate, PostDebateMove, SetModelBudget, type CommandDefinition, type DebateView } from '@agora/contracts';
import { debateStreamId, EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC } from '@agora/domain-debate';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { recordedModelCalls } from '@agora/participants';
import { DEFAULT_PRICES, ProviderLayer, StandIns } from '@agora/providers';
import { Agora, MessagingTransport } from '@agora/sdk';
import { startServiceFleet, waitFor, type ServiceFleet } from '@agora/testing';
import { runLlmDebate, type TurnReport } from '../src/llm-runner.js';
import type { DebateClient } from '../src/scripted.js';
import { personaModel } from './support/persona-model.js';

const DEBATERS = ['saylor', 'hayes'] as const;
const DEBATE = 'btc-threads';
const SPAWNED_TOPIC = 'Will spot ETF flows decide the Bitcoin price?';

describe('a debate of several threads over separate processes, played by models (e2e)', () => {
  let fleet: ServiceFleet;
  let stands: StandIns;
  let store: EventStore;

  const send = (agent: string, definition: Pick<CommandDefinition, 'type' | 'subject'>, payload: Record<string, unknown>) => fleet.send<{ events: string[] }>(agent, definition, payload);
  const client: DebateClient = {
    move: (agentId, payload) => send(agentId, PostDebateMove, payload),
    debate: (debateId) => fleet.query<DebateView>(GetDebate.subject, { debateId }),
  };

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'debate-threads', env: () => ({ METRICS_HOST: '127.0.0.1' }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    stands = await StandIns.start();
    await Promise.all(['registry', 'debate'].map((service) => fleet.start(service)));
    for (const agentId of DEBATERS) {
      await fleet.register({ [agentId]: { roles: ['debater'], trustScore: 500 } });
      await fleet.ok('root', SetModelBudget, { agentId, amount: 20, currency: 'USD' });
    }
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
    await stands?.close();
  }, 30_000);

  it('spawns a thread on a model\'s second bite, merges the duplicate threads, and completes with coalitions and common ground', async () => {
    const threads = [
      { threadId: 'main', topic: EXAMPLE_TOPIC },
      { threadId: 'reserve', topic: 'Bitcoin as a treasury reserve asset for companies' },
    ];
    await waitFor(async () => (await send('saylor', OpenDebate, { debateId: DEBATE, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS, threads })).ok, 'the debate service to know the debaters', 20_000);

    // Hayes' model proposes a thread when nothing else is due from it (first a duplicate of main, refused, then a new
    // sub-dispute); saylor's model is told the second is due and gives it.
    const model = personaModel({ proposeThread: { agentId: 'hayes', topics: ['Is Bitcoin really digital gold?', SPAWNED_TOPIC] } });
    stands.script(model);
    const turns: TurnReport[] = [];
    // Each debater's calls reserved and recorded in its own ledger, signed with its key, over NATS.
    const layer = new ProviderLayer({ providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 10_000, maxAttempts: 2, backoffMs: 10 }, stands.env);
    const calls = Object.fromEntries(DEBATERS.map((a) => [a, recordedModelCalls(Agora.over(new MessagingTransport(fleet.client), { signer: { secretKey: fleet.key(a).secretKey, agentId: a } }), layer)]));
    const result = await runLlmDebate({
      calls: (agentId) => calls[agentId]!,
      client,
      debateId: DEBATE,
      personas: [
        { agentId: 'saylor', persona: 'Michael Saylor: Bitcoin maximalist, treasury reserve', model: 'openai:gpt-4.1' },
        { agentId: 'hayes', persona: 'Arthur Hayes: macro trader, ETF flows and liquidity', model: 'anthropic:claude-sonnet-4-20250514' },
      ],
      maxTurns: 400,
      onTurn: (t) => turns.push(t),
    });
    expect(result.complete).toBe(true);
    expect(result.wallMs).toBeLessThan(45_000);
    // The models were offered the thread moves and played them, on their own providers' wire APIs.
    const accepted = turns.filter((t) => t.outcome === 'accepted');
    expect(accepted.filter((t) => t.kind === 'PROPOSE_THREAD' || t.kind === 'SECOND_THREAD').map((t) => [t.agentId, t.kind, t.model])).toEqual([
      ['hayes', 'PROPOSE_THREAD', 'anthropic:claude-sonnet-4-20250514'],
      ['saylor', 'SECOND_THREAD', 'openai:gpt-4.1'],
    ]);
    expect(stands.servers.anthropic.requests[0]!.prompt).toMatch(/^Moves allowed now: .*PROPOSE_THREAD\.$/m);
    // A model's proposal is validated like any move: the duplicate is refused, and the retry is told why.
    expect(turns.filter((t) => t.kind === 'PROPOSE_THREAD').map((t) => [t.agentId, t.outcome, t.detail])).toEqual([
      ['hayes', 'refused', expect.stringMatching(/^invalid_command: PROPOSE_THREAD refused: thread main already takes it up/)],
      ['hayes', 'accepted', expect.stringMatching(/ThreadSpawnProposed/)],
    ]);
    expect(stands.servers.anthropic.requests[1]!.prompt).toMatch(/Your previous answer was refused: invalid_command: PROPOSE_THREAD refused: thread main already takes it up/);
    expect(stands.requests.some((r) => /^Due from you now, most pressing first: SECOND_THREAD #\d+ by hayes/m.test(r.prompt))).toBe(true);

    // The log (JetStream, written by the debate service's process): the spawn, the merges, the completion.
    const events = await store.readStream(debateStreamId(DEBATE));
    const proposed = events.filter((e) => e.type === 'ThreadSpawnProposed').map((e) => e.data as { agentId: string; topic: string; seq: number });
    expect(proposed).toEqual([expect.objectContaining({ agentId: 'hayes', topic: SPAWNED_TOPIC })]);
    const spawned = events.filter((e) => e.type === 'ThreadSpawned').map((e) => e.data as { newThreadId: string; proposedBy: string; secondedBy: string; threadId: string });
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toMatchObject({ proposedBy: 'hayes', secondedBy: 'saylor', newThreadId: `${spawned[0]!.threadId}-s${proposed[0]!.seq}` });
    // The spawning moves are the models' own: each message carries its call's usage.
    const thread = events.filter((e) => e.type === 'DebateMessagePosted').map((e) => e.data as { kind: string; usage: { model: string } | null }).filter((m) => m.kind === 'PROPOSE_THREAD' || m.kind === 'SECOND_THREAD');
    expect(thread.map((m) => m.usage?.model)).toEqual(['anthropic:claude-sonnet-4-20250514', 'openai:gpt-4.1']);
    const merges = events.filter((e) => e.type === 'ThreadsMerged').map((e) => e.data as { threadId: string; into: string });
    expect(merges.length).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.type === 'DebateCompleted')).toHaveLength(1);
    const completed = events.find((e) => e.type === 'DebateCompleted')!.data as { coalitions: unknown[]; commonGround: { agreedQuestions: unknown[]; concessions: unknown[]; sharedMetrics: unknown[] } };
    expect(completed.coalitions).toEqual([]); // opponents on every thread: no coalition
    expect(completed.commonGround).toEqual({ agreedQuestions: [], concessions: expect.any(Array), sharedMetrics: expect.any(Array) });

    // The debate view (the service's query, over NATS) tells the same story.
    const d = await client.debate(DEBATE);
    expect(d.threads.map((t) => t.threadId)).toEqual(['main', 'reserve', spawned[0]!.newThreadId]);
    expect(d.threads.find((t) => t.threadId === spawned[0]!.newThreadId)).toMatchObject({ parentThreadId: spawned[0]!.threadId, topic: SPAWNED_TOPIC });
    const kept = d.threads.filter((t) => t.mergedInto === null);
    expect(kept).toHaveLength(1);
    expect(d.threads.filter((t) => t.mergedInto !== null).map((t) => [t.threadId, t.mergedInto])).toEqual(merges.map((m) => [m.threadId, m.into]));
    expect(kept[0]).toMatchObject({ stage: 'CONVERGED', crux: { validated: true, positions: { saylor: { side: 'YES' }, hayes: { side: 'NO' } } } });
    expect(d).toMatchObject({ status: 'complete', outcome: 'converged', primaryThreadId: kept[0]!.threadId });
    expect(d.usage.calls).toBe(accepted.length);

    // Every call the models answered is in the debaters' ledgers (the registry's process, the same JetStream log).
    const recorded = await Promise.all(DEBATERS.map(async (a) => (await store.readStream(`model_calls-${a}@${new Date().toISOString().slice(0, 7)}`)).filter((e) => e.type === 'ModelCallRecorded')));
    expect(recorded.flat()).toHaveLength(stands.requests.length);
    expect(result.calls).toBe(stands.requests.length);
  }, 60_000);
});
