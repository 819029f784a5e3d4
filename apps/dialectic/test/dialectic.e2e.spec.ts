// The dialectic as an operator runs it: registry (with the circuit breaker), voting and dialectic as
// separate processes over a NATS server of the test's own (so no other run's services join their
// queue groups), the log in JetStream. The agents speak to them over NATS with signed commands:
// the seed's worked example (risk 0.65 -> a compromise at 0.48) survives a SIGKILL of every process
// in the middle of a synthesis round, and a silent reviewer's antithesis deadline fires through the
// durable scheduler (AGORA_DIALECTIC_POLICY gives it seconds).
import { randomUUID } from 'node:crypto';
import {
  CreateVotingSession,
  GetAgent,
  GetDialecticSession,
  ReportHealth,
  SignResolution,
  SubmitAntithesis,
  SubmitSynthesis,
  SubmitThesis,
  type AgentView,
  type Condition,
  type DialecticSessionView,
} from '@agora/contracts';
import { dialecticStreamId, signResolution } from '@agora/domain-dialectic';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { runToCompletion, startServiceFleet, type CommandRef, type ServiceFleet } from '@agora/testing';

// The antithesis has seconds: the silent reviewer's deadline is due while (or soon after) every process is down.
// Every other deadline keeps the seed's hours.
const POLICY = { antithesisTimeoutMs: 8_000 };
const SERVICES = ['registry', 'voting', 'dialectic'] as const;

// ada: the seed's paused agent; bob: paused too, his reviewer stays silent; the reviewers (and tie-breakers) are drawn from the rest.
const FLEET = { ada: ['executive'], bob: ['executive'], rev1: ['reviewer'], rev2: ['reviewer'], rev3: ['reviewer'] } as const;
type Agent = keyof typeof FLEET;

const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
const cascade: Condition = { operation: 'enable_cascade_detection', parameters: {} };

describe('the dialectic over separate processes (e2e)', () => {
  let fleet: ServiceFleet;
  let store: EventStore;

  const send = (agent: Agent | 'root', command: CommandRef, payload: Record<string, unknown>) => fleet.send(agent, command, payload);
  const ok = (agent: Agent | 'root', command: CommandRef, payload: Record<string, unknown>) => fleet.ok(agent, command, payload);
  const query = <T>(subject: string, params: unknown) => fleet.query<T>(subject, params);
  const session = (sessionId: string) => query<DialecticSessionView>(GetDialecticSession.subject, { sessionId });
  const agentView = (agentId: Agent) => query<AgentView>(GetAgent.subject, { agentId });
  const sessionWhen = (sessionId: string, check: (s: DialecticSessionView) => boolean, what: string, timeoutMs = 15_000) =>
    fleet.until(() => session(sessionId), check, `${what} (session ${sessionId})`, timeoutMs);
  const breakerWhen = (agentId: Agent, state: 'open' | 'closed') => fleet.until(() => agentView(agentId), (agent) => agent.breaker.state === state, `the breaker of ${agentId} to be ${state}`);
  /** Trips the breaker of `agentId` at the seed's risk (0.65 over the default 0.60) and waits for its recovery to open with a reviewer. */
  const pause = async (agentId: Agent) => {
    expect(await ok(agentId, ReportHealth, { agentId, health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { coherence: 0.45 } })).toMatchObject({ events: ['AgentHealthReported', 'AgentPaused'] });
    return sessionWhen(`${agentId}-p1`, (s) => s.status === 'awaiting_thesis' && s.reviewer !== null, 'the recovery to open');
  };
  const thesis = (s: DialecticSessionView) =>
    ok(s.agentId as Agent, SubmitThesis, { sessionId: s.sessionId, rootCause: 'AGI discussion triggered complexity spike', proposedConditions: [threshold(0.45), cascade], reasoning: 'External spike, not internal failure' });
  const sign = async (sessionId: string, signer: Agent) => {
    const payload = (await session(sessionId)).proposed!.payload;
    return ok(signer, SignResolution, { sessionId, publicKey: fleet.key(signer).publicKey, signature: signResolution(payload, signer, fleet.key(signer).secretKey) });
  };
  /** A command of a paused agent to another service (voting). */
  const deploy = () => send('ada', CreateVotingSession, { requestId: `ada-deploy-${randomUUID()}`, actionType: 'deploy_production', riskLevel: 'high' });

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'dialectic', env: () => ({ AGORA_DIALECTIC_POLICY: JSON.stringify(POLICY) }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    await Promise.all((['registry', 'voting'] as const).map((name) => fleet.start(name)));
    await fleet.register(Object.fromEntries(Object.entries(FLEET).map(([agentId, roles]) => [agentId, { roles, trustScore: 700 }])));
    // The dialectic draws reviewers from the registry as its process knows it: started now, it has caught up with the fleet.
    await fleet.start('dialectic');
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 60_000);

  it("runs the seed's worked example (0.65 -> 0.48) across processes, losing nothing to a SIGKILL of every process mid-synthesis", async () => {
    // bob pauses first (so he is no candidate to review ada); his reviewer will stay silent (next test).
    const bobs = await pause('bob');
    const opened = await pause('ada');
    const reviewer = opened.reviewer as Agent;
    expect(['rev1', 'rev2', 'rev3']).toContain(reviewer);
    expect(await agentView('ada')).toMatchObject({ risk: 0.65, breaker: { state: 'open', pauses: 1, sessionId: 'ada-p1' } });
    // Paused, its commands to another service are refused; its part in its recovery is not.
    expect(await deploy()).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/paused by its circuit breaker/) } });

    await thesis(opened);
    await ok(reviewer, SubmitAntithesis, {
      sessionId: 'ada-p1',
      observedMetrics: { risk_score: 0.65, coherence: 0.45 },
      concerns: ['Risk too high', 'Need monitoring'],
      reasoning: 'Threshold 0.45 too permissive, suggest 0.48',
      counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade] },
    });
    const agreed = [threshold(0.48), cascade];
    await ok('ada', SubmitSynthesis, { sessionId: 'ada-p1', round: 1, rootCause: 'External complexity spike', proposedConditions: agreed, reasoning: "Compromise on reviewer's threshold", agrees: true });
    // bob's thesis starts his reviewer's (short) antithesis deadline just before the crash.
    await thesis(bobs);
    const before = await session('ada-p1');
    expect(before).toMatchObject({ status: 'synthesis', round: 1, awaiting: [reviewer] });

    // Every process goes down hard in the middle of the synthesis round, and comes back.
    await Promise.all([...fleet.processes.values()].map((p) => p.kill()));
    await Promise.all(SERVICES.map((name) => fleet.start(name)));

    expect(await session('ada-p1')).toEqual(before);
    expect(await deploy()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await ok(reviewer, SubmitSynthesis, { sessionId: 'ada-p1', round: 2, rootCause: 'External complexity spike', proposedConditions: [cascade, threshold(0.48)], reasoning: 'Agreed', agrees: true })).toEqual(
      expect.objectContaining({ events: ['SynthesisSubmitted', 'ResolutionProposed'] }),
    );
    expect((await session('ada-p1')).proposed!.payload).toMatchObject({ rootCause: 'External complexity spike', conditions: [cascade, threshold(0.48)], decidedBy: 'dialectic' });
    expect(await sign('ada-p1', 'ada')).toMatchObject({ events: ['ResolutionSigned'] });
    expect(await sign('ada-p1', reviewer)).toMatchObject({ events: ['ResolutionSigned', 'RecoveryResolved'] });

    // The restarted registry's breaker resumes ada at her new threshold; her commands go through again.
    await breakerWhen('ada', 'closed');
    expect(await agentView('ada')).toMatchObject({ breaker: { state: 'closed', riskThreshold: 0.48, sessionId: null, lastResume: { pause: 1, sessionId: 'ada-p1' } } });
    expect(await session('ada-p1')).toMatchObject({ status: 'resolved', resolved: { riskThreshold: 0.48, resolution: { decidedBy: 'dialectic' } } });
    expect(await deploy()).toMatchObject({ ok: true });
    // One session per pause, the events once each: nothing was opened or written twice across the crash.
    const types = (await store.readStream(dialecticStreamId('ada-p1'))).map((e) => e.type);
    expect(types.filter((t) => t === 'RecoveryOpened')).toHaveLength(1);
    expect(types.filter((t) => t === 'SynthesisSubmitted')).toHaveLength(2);
  }, 150_000);

  it('expires the silent reviewer\'s antithesis at its deadline through the durable scheduler, and climbs the ladder', async () => {
    const escalated = await sessionWhen('bob-p1', (s) => s.escalations[0]?.tieBreaker != null, 'the expiry and the tie-breaker draw', 30_000);
    const reviewer = escalated.reviewer!;
    const events = await store.readStream(dialecticStreamId('bob-p1'));
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'DialecticPhaseExpired')).toHaveLength(1);
    const expired = events.find((e) => e.type === 'DialecticPhaseExpired')!;
    expect(expired.data).toMatchObject({ sessionId: 'bob-p1', status: 'awaiting_antithesis', late: [reviewer], sessionLimit: false });
    // The deadline the thesis set (its time plus the configured 8 s), not the seed's 2 h.
    const thesis = events.find((e) => e.type === 'ThesisSubmitted')!.data as { deadlineAt: string; submittedAt: string };
    expect((expired.data as { deadlineAt: string }).deadlineAt).toBe(thesis.deadlineAt);
    expect(Date.parse(thesis.deadlineAt) - Date.parse(thesis.submittedAt)).toBe(POLICY.antithesisTimeoutMs);
    expect(types.slice(types.indexOf('DialecticPhaseExpired'))).toEqual(['DialecticPhaseExpired', 'RecoveryEscalated', 'TieBreakerSelected']);
    expect(events.find((e) => e.type === 'RecoveryEscalated')!.data).toMatchObject({ escalation: 1, tier: 'tie_break', reason: 'timeout' });
    expect(escalated).toMatchObject({ status: 'tie_break', escalations: [{ tier: 'tie_break', reason: 'timeout' }] });
    expect(['bob', reviewer, 'ada']).not.toContain(escalated.escalations[0]!.tieBreaker);
    // The late reviewer can no longer answer.
    expect(await send(reviewer as Agent, SubmitAntithesis, { sessionId: 'bob-p1', observedMetrics: {}, concerns: ['late'], reasoning: 'late' })).toMatchObject({ ok: false });
  }, 60_000);

  it('stops with exit code 2 naming AGORA_DIALECTIC_POLICY when it is bad; --help lists it', async () => {
    const run = (args: string[], extra: Record<string, string>) => runToCompletion('apps/dialectic/src/main.ts', args, { NATS_URL: fleet.nats.url, EVENT_STORE: fleet.log.eventStore, AGORA_OPERATOR_PUBLIC_KEY: fleet.key('root').publicKey, ...extra });
    const [invalid, notJson, help] = await Promise.all([
      run([], { AGORA_DIALECTIC_POLICY: '{"antithesisTimeoutMs":10}' }),
      run([], { AGORA_DIALECTIC_POLICY: '{nope' }),
      run(['--help'], {}),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^agora-dialectic: AGORA_DIALECTIC_POLICY: invalid dialectic policy: antithesisTimeoutMs/);
    expect(invalid.stdout).not.toMatch(/ready/);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/AGORA_DIALECTIC_POLICY is not JSON/);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^\s+AGORA_DIALECTIC_POLICY\b/m);
  }, 60_000);
});
