// Every panel of the checked-in dashboards against a real Prometheus that scraped a real Agora: the
// registry, proposal, tribunal, voting, dialectic, projections and gateway as separate processes over
// a NATS server of the test's own (the log in JetStream there), each serving /metrics on a port of its
// own; Debian's `prometheus` started here with a generated scrape config and the deploy rules. The
// activity is the demos': the tribunal demo (tools/demo) run as a user runs it against the gateway
// (then two of its proposals' outcomes reported), then a few voting sessions (unanimous, split and escalated to an operator, expired), a dialectic
// recovery from pause to signed resolution, two chamber sessions (the panel's providers pointed by
// base URL at stand-in servers speaking their wire APIs: one reaches consensus after a
// cross-examination, one fails on a provider's error) and the seed's scripted crux debate, over
// NATS with signed commands. A panel query that does not parse, or returns no series, fails the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { panelScript, phaseOf } from '@agora/chamber';
import { ApproveChamberSession, GetChamberSession, GetDebate, GetDialecticSession, ListProposals, OpenDebate, PostDebateMove, ProposeChamberSession, type ChamberSessionView, type DebateView, type DialecticSessionView, type Reply } from '@agora/contracts';
import { playScript, type DebateClient } from '@agora/debate';
import { EXAMPLE_PARTICIPANTS, EXAMPLE_TOPIC, exampleScript } from '@agora/domain-debate';
import { signResolution } from '@agora/domain-dialectic';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { createSignedCommand, parseKeyFile, type KeyPair } from '@agora/identity';
import type { NatsAgoraClient } from '@agora/messaging';
import { StandIns } from '@agora/providers';
import { freePort, processEnvironment, REPO_ROOT, runToCompletion, sourceArgs, startServiceFleet, waitFor, type AgoraProcess, type ServiceFleet } from '@agora/testing';

const PROMETHEUS = process.env['PROMETHEUS_BIN'] ?? '/usr/bin/prometheus';
const hasPrometheus = existsSync(PROMETHEUS);
if (!hasPrometheus) console.warn(`SKIPPED the dashboards against a real Prometheus: ${PROMETHEUS} not found; install it with \`apt-get install prometheus\`, or set PROMETHEUS_BIN`);

const DASHBOARDS = join(REPO_ROOT, 'deploy/grafana/dashboards');
const RULES = join(REPO_ROOT, 'deploy/prometheus/agora-rules.yml');
const SERVICES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'chamber', 'debate', 'projections', 'gateway'] as const;
/** The services that answer commands (the projections answer queries, the gateway relays). */
const COMMAND_SERVICES = ['registry', 'proposal', 'tribunal', 'voting', 'dialectic', 'chamber', 'debate'] as const;
const VALIDATORS = ['val1', 'val2', 'val3', 'val4', 'val5'];

(hasPrometheus ? describe : describe.skip)('the Grafana dashboards against a real Prometheus that scraped a real Agora (e2e)', () => {
  let fleet: ServiceFleet;
  let dir: string;
  let store: EventStore;
  let client: NatsAgoraClient;
  let prometheus: ChildProcess | undefined;
  /** `agora audit --follow` on the log, as an auditor runs it beside the deployment (job agora-audit). */
  let auditor: ChildProcess | undefined;
  let auditorOutput = '';
  let prometheusLog = '';
  let prometheusUrl: string;
  let stands: StandIns;
  let processes: Map<string, AgoraProcess>;
  const metricsTargets = new Map<string, string>();

  /** An agent's key: this test's own, or one the tribunal demo made (under <data>/demo-keys). */
  const keyOf = (agent: string): KeyPair => (fleet.keys[agent] ??= parseKeyFile(readFileSync(join(dir, 'demo-keys', `${agent}.key.json`), 'utf8')));
  const ok = async (agent: string, type: string, payload: Record<string, unknown>) => {
    keyOf(agent);
    return fleet.ok<{ events: string[] }>(agent, type, payload);
  };
  const register = (agentId: string, roles: string[], trustScore = 700) => fleet.register({ [agentId]: { roles, specializations: [], trustScore } });
  const chamberSession = async (sessionId: string): Promise<ChamberSessionView> => {
    const reply = (await client.request(GetChamberSession.subject, { sessionId }, { timeoutMs: 10_000 })) as Reply<ChamberSessionView>;
    if (!reply.ok) throw new Error(`${reply.error.code} ${reply.error.message}`);
    return reply.result;
  };
  const session = async (sessionId: string): Promise<DialecticSessionView | undefined> => {
    const reply = (await client.request(GetDialecticSession.subject, { sessionId }, { timeoutMs: 10_000 })) as Reply<DialecticSessionView>;
    return reply.ok ? reply.result : undefined;
  };
  type Vector = { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
  const query = async (expr: string): Promise<{ status: string; error?: string; data?: Vector }> => {
    const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as { status: string; error?: string; data?: Vector };
  };
  const series = async (expr: string) => (await query(expr)).data?.result ?? [];

  beforeAll(async () => {
    fleet = await startServiceFleet({
      label: 'dashboards',
      env: (name) => ({
        // The demo's quiet round asks for a 5 s time-box.
        AGORA_TRIBUNAL_POLICY: '{"minRoundDeadlineMs":1000}',
        METRICS_PORT: '0',
        METRICS_HOST: '127.0.0.1',
        PORT: '0',
        HOST: '127.0.0.1',
        AGORA_PROVIDER_BACKOFF_MS: '50',
        ...(name === 'chamber' ? stands.env : {}),
      }),
    });
    ({ dir, client, processes } = fleet);
    // The chamber's panel: two providers against one in the blind phase (divergent), so one
    // cross-examination round follows and the third comes round; google refuses every call about the
    // job queue (an HTTP 400, not retried), so that session fails on too few answers.
    const script = panelScript({
      blind: { openai: 'harden it', anthropic: 'harden it', google: 'rewrite it' },
      cross: { google: 'harden it' },
      override: (request) => (request.kind === 'google' && request.prompt.includes('job queue') ? { status: 400, message: 'the request was refused' } : undefined),
    });
    stands = await StandIns.start((request, index) => script(request, index));
    // The test opens the log first, so the processes find the stream made.
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    // The operator's key file, for the demo.
    await writeFile(join(dir, 'operator.key.json'), JSON.stringify({ agentId: 'root', ...fleet.key('root') }), { mode: 0o600 });
    const started = await Promise.allSettled(SERVICES.map((name) => fleet.start(name, {}, 120_000)));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    for (const [name, process] of processes) {
      const url = /metrics: http:\/\/(\S+)\/metrics/.exec(process.output())?.[1];
      if (!url) throw new Error(`agora-${name} named no metrics address:\n${process.output()}`);
      metricsTargets.set(name, url);
    }
    // The auditor follows the log with the services' public keys (each printed its own on first start) and their policies.
    const serviceKeys = Object.fromEntries([...processes.values()].flatMap((p) => [...p.output().matchAll(/created the (\w+) service's key \S+ \(public key (ed25519:[\w-]+)\)/g)].map((m) => [m[1]!, m[2]!])));
    const auditorEnv = { ...fleet.env('projections'), AGORA_DATA_DIR: join(dir, 'auditor'), AGORA_SERVICE_PUBLIC_KEYS: JSON.stringify(serviceKeys), ...stands.env };
    auditor = spawn(process.execPath, [...sourceArgs('apps/cli/src/main.ts'), 'audit', '--follow', '--workers', '0'], { cwd: REPO_ROOT, env: processEnvironment(auditorEnv), stdio: ['ignore', 'pipe', 'pipe'] });
    auditor.stdout!.setEncoding('utf8').on('data', (chunk: string) => (auditorOutput += chunk));
    auditor.stderr!.setEncoding('utf8').on('data', (chunk: string) => (auditorOutput += chunk));
    await waitFor(() => /following the log$/m.test(auditorOutput) || auditor!.exitCode !== null, 'the audit to follow the log', 60_000);
    const auditorTarget = /metrics: http:\/\/(\S+)\/metrics/.exec(auditorOutput)?.[1];
    if (!auditorTarget) throw new Error(`agora audit --follow named no metrics address:\n${auditorOutput}`);

    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const config = [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
      `rule_files: [${JSON.stringify(RULES)}]`,
      'scrape_configs:',
      '  - job_name: agora',
      `    static_configs: [{ targets: ${JSON.stringify([...metricsTargets.values()])} }]`,
      '  - job_name: agora-audit',
      `    static_configs: [{ targets: ${JSON.stringify([auditorTarget])} }]`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'prometheus.yml'), config);
    prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stdout!.setEncoding('utf8').on('data', (chunk: string) => (prometheusLog += chunk));
    prometheus.stderr!.setEncoding('utf8').on('data', (chunk: string) => (prometheusLog += chunk));
    await waitFor(
      async () => {
        if (prometheus!.exitCode !== null) throw new Error(`prometheus exited with ${prometheus!.exitCode}:\n${prometheusLog}`);
        return (await query('up').catch(() => undefined))?.data?.result.length === SERVICES.length + 1;
      },
      'Prometheus to scrape every process',
      60_000,
    );
  }, 240_000);

  afterAll(async () => {
    if (auditor && auditor.exitCode === null) {
      const exited = new Promise<void>((ok) => auditor!.once('exit', () => ok()));
      auditor.kill('SIGTERM');
      await exited;
    }
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise<void>((ok) => prometheus!.once('exit', () => ok()));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await store?.close();
    await fleet?.stop();
    await stands?.close();
  }, 60_000);

  it('plays the tribunal demo against the gateway, then voting sessions, a dialectic recovery, chamber sessions and a crux debate over NATS', async () => {
    const gateway = /listening on (http:\/\/\S+)/.exec(processes.get('gateway')!.output())![1]!;
    const demo = await runToCompletion('tools/demo/src/main.ts', ['tribunal', '--url', gateway, '--key', join(dir, 'operator.key.json'), '--data', dir, '--metrics', `http://${metricsTargets.get('projections')}/metrics`], {}, 240_000);
    if (demo.code !== 0) throw new Error(`the tribunal demo failed (${demo.code}):\n${demo.stdout}${demo.stderr}`);
    expect(demo.stdout).toMatch(/approved in round 2/);
    expect(demo.stdout).toMatch(/approved at the deadline/);

    // Outcomes: an approved proposal of the demo is executed and fails (seldon reports it); the rogue
    // one, executed despite objections, worked (an operator reports it).
    const listed = (await client.request(ListProposals.subject, {}, { timeoutMs: 10_000 })) as Reply<{ proposals: { proposalId: string; status: string }[] }>;
    if (!listed.ok) throw new Error(`${listed.error.code} ${listed.error.message}`);
    const approved = listed.result.proposals.find((p) => p.status === 'approved')!.proposalId;
    const rogue = listed.result.proposals.find((p) => p.proposalId.startsWith('rogue-'))!.proposalId;
    await ok('seldon', 'RecordExecution', { proposalId: approved, summary: 'done' });
    await ok('seldon', 'ReportOutcome', { proposalId: approved, outcome: 'failed', note: 'nobody came' });
    await ok('root', 'ReportOutcome', { proposalId: rogue, outcome: 'worked', note: 'it held' });

    // Voting: a unanimous approval; a critical action without unanimity, which the service escalates
    // and an operator decides; a session that expires with one vote.
    await register('deployer', ['executive']);
    for (const [i, validator] of VALIDATORS.entries()) await register(validator, ['validator'], 900 - i * 10);
    const run = Date.now().toString(36);
    const create = (id: string, extra: Record<string, unknown> = {}) => ok('deployer', 'CreateVotingSession', { requestId: `${id}-${run}`, actionType: 'deploy_production', riskLevel: 'high', ...extra });
    const vote = (id: string, validator: string, decision: string) => ok(validator, 'CastValidatorVote', { sessionId: `${id}-${run}`, decision, reasoning: `${validator}: ${decision}`, confidence: 0.9 });
    await create('unanimous');
    for (const v of VALIDATORS) await vote('unanimous', v, 'approve');
    await create('critical', { actionType: 'drop_table', riskLevel: 'critical' });
    for (const [i, v] of VALIDATORS.entries()) await vote('critical', v, i === 4 ? 'deny' : 'approve');
    await ok('root', 'DecideVotingEscalation', { sessionId: `critical-${run}`, decision: 'deny', reason: 'a critical action needs every validator' });
    await create('expiring', { votingTimeoutMs: 1_000 });
    await vote('expiring', 'val1', 'approve');

    // Dialectic: ada's breaker trips (risk 0.65 over 0.60); she and the reviewer drawn converge on 0.48 and sign.
    await register('ada', ['executive']);
    await ok('ada', 'ReportHealth', { agentId: 'ada', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { coherence: 0.45 } });
    let opened: DialecticSessionView | undefined;
    await waitFor(async () => {
      opened = await session('ada-p1');
      return opened?.status === 'awaiting_thesis' && opened.reviewer !== null;
    }, 'the recovery of ada to open with a reviewer', 30_000);
    const reviewer = opened!.reviewer!;
    const threshold = (value: number) => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
    const agreed = [threshold(0.48)];
    await ok('ada', 'SubmitThesis', { sessionId: 'ada-p1', rootCause: 'AGI discussion triggered complexity spike', proposedConditions: [threshold(0.45)], reasoning: 'External spike, not internal failure' });
    await ok(reviewer, 'SubmitAntithesis', { sessionId: 'ada-p1', observedMetrics: { risk_score: 0.65 }, concerns: ['Threshold 0.45 too permissive'], reasoning: 'suggest 0.48', counterProposal: { rootCause: 'External complexity spike', proposedConditions: agreed } });
    await ok('ada', 'SubmitSynthesis', { sessionId: 'ada-p1', round: 1, rootCause: 'External complexity spike', proposedConditions: agreed, reasoning: 'Compromise', agrees: true });
    await ok(reviewer, 'SubmitSynthesis', { sessionId: 'ada-p1', round: 2, rootCause: 'External complexity spike', proposedConditions: agreed, reasoning: 'Agreed', agrees: true });
    const payload = (await session('ada-p1'))!.proposed!.payload;
    for (const signer of ['ada', reviewer]) await ok(signer, 'SignResolution', { sessionId: 'ada-p1', publicKey: keyOf(signer).publicKey, signature: signResolution(payload, signer, keyOf(signer).secretKey) });

    // The chamber: a session proposed by the pipeline and approved by the operator reaches consensus
    // after a cross-examination; a second one fails when google refuses its blind call.
    await register('pipeline', ['executive']);
    const chamber = async (sessionId: string, question: string) => {
      await waitFor(async () => (await client.request(ProposeChamberSession.subject, createSignedCommand({ type: ProposeChamberSession.type, actor: 'pipeline', payload: { sessionId, question, context: 'Three incidents last quarter.', rationale: 'costly either way' }, secretKey: keyOf('pipeline').secretKey }), { timeoutMs: 15_000 })).ok, `the proposal of ${sessionId} (once the chamber knows the pipeline)`, 30_000);
      await ok('root', ApproveChamberSession.type, { sessionId });
      let view: ChamberSessionView | undefined;
      await waitFor(async () => (view = await chamberSession(sessionId)).summary.outcome !== null && view.summary.pendingCalls === 0, `the outcome of ${sessionId}`, 60_000);
      return view!;
    };
    expect((await chamber(`billing-${run}`, 'Rewrite billing in Rust this quarter?')).summary.outcome).toBe('consensus');
    expect((await chamber(`queue-${run}`, 'Replace the job queue with a stream?')).summary.outcome).toBe('failed');
    expect(stands.requests.filter((r) => phaseOf(r) === 'arbiter')).toHaveLength(1);

    // The seed's crux debate, scripted: saylor and hayes (registered debaters) move over NATS; the
    // first two lock attempts fail and the moderator answers each before the debate goes on (the seed's
    // own CRUX_LOCK budget of 6-8, set explicitly: two agents' derived 8-10 would lock on the second attempt).
    for (const participant of EXAMPLE_PARTICIPANTS) await register(participant.agentId, ['debater']);
    const debateId = `btc-${run}`;
    const debates: DebateClient = {
      move: async (agentId, payload) => (await client.request(PostDebateMove.subject, createSignedCommand({ type: PostDebateMove.type, actor: agentId, payload, secretKey: keyOf(agentId).secretKey }), { timeoutMs: 15_000 })) as Reply<{ events: string[] }>,
      async debate(id) {
        const reply = (await client.request(GetDebate.subject, { debateId: id }, { timeoutMs: 10_000 })) as Reply<DebateView>;
        if (!reply.ok) throw new Error(`${reply.error.code} ${reply.error.message}`);
        return reply.result;
      },
    };
    const opener = EXAMPLE_PARTICIPANTS[0]!.agentId;
    await waitFor(async () => (await client.request(OpenDebate.subject, createSignedCommand({ type: OpenDebate.type, actor: opener, payload: { debateId, topic: EXAMPLE_TOPIC, participants: EXAMPLE_PARTICIPANTS, settings: { cruxLock: { min: 6, max: 8 } } }, secretKey: keyOf(opener).secretKey }), { timeoutMs: 15_000 })).ok, 'the debate to open (once the debate service knows the debaters)', 30_000);
    const interventions = (count: number) => waitFor(async () => (await debates.debate(debateId)).threads[0]!.interventions.length >= count, `the moderator's intervention ${count}`, 30_000);
    const steps = exampleScript();
    await playScript(debates, debateId, steps.slice(0, 12));
    await interventions(1);
    await playScript(debates, debateId, steps.slice(12, 14));
    await interventions(3);
    await playScript(debates, debateId, steps.slice(14));
    await waitFor(async () => (await debates.debate(debateId)).status === 'complete', 'the debate to complete', 30_000);

    // Prometheus has it all once the projections show the recovery resolved, the three sessions concluded, the chamber sessions and the debate.
    await waitFor(async () => (await series('agora_dialectic_sessions{status="resolved"} == 1')).length === 1, 'Prometheus to scrape the resolved recovery', 60_000);
    await waitFor(async () => Number((await series('sum(agora_voting_concluded_sessions_total)'))[0]?.value[1] ?? 0) >= 3, 'Prometheus to scrape the concluded voting sessions', 60_000);
    await waitFor(async () => (await series('agora_chamber_sessions_concluded_total{outcome="failed"} == 1')).length === 1, 'Prometheus to scrape the failed chamber session', 60_000);
    await waitFor(async () => (await series('agora_debate_completed_debates_total{outcome="converged"} == 1')).length === 1, 'Prometheus to scrape the converged debate', 60_000);
    await waitFor(async () => (await series('agora_tribunal_outcomes_total == 1')).length === 2, 'Prometheus to scrape both outcome reports', 60_000);
    // A rate needs two scrapes of a series: the last commands' counters too.
    await waitFor(async () => (await series('sum by (service) (rate(agora_commands_handled_total[5m]))')).length === COMMAND_SERVICES.length, 'two scrapes of every service\'s commands', 30_000);
    await waitFor(async () => (await series('agora:chamber_call_errors:ratio_rate1h')).length === 3, 'the error rate of every provider', 30_000);
  }, 300_000);

  it('has every process serve its own metrics: commands by type and outcome, store latency, reactor and deadline lag, NATS', async () => {
    const instances = async (expr: string) => new Set((await series(expr)).map((s) => s.metric['instance']));
    const all = new Set(metricsTargets.values());
    // Every process: its store and its NATS connections (the client; each service's own).
    expect(await instances('agora_store_appends_total')).toEqual(all);
    expect(await instances('agora_nats_reconnects_total{connection="client"}')).toEqual(all);
    expect(await instances('agora_nats_slow_consumer_events_total')).toEqual(all);
    // each service's own connection (the one its NATS microservice serves on), in its process
    for (const service of [...COMMAND_SERVICES, 'projections'] as const) {
      expect(await instances(`agora_nats_slow_consumer_events_total{connection="${service}"}`)).toEqual(new Set([metricsTargets.get(service)]));
    }
    expect(await instances('process_cpu_seconds_total{job="agora"}')).toEqual(all);
    // Commands, each service on its own process, refusals by code (the demo's vague objection, seldon deciding his own escalation).
    for (const service of COMMAND_SERVICES) {
      expect(await instances(`agora_commands_handled_total{service="${service}",outcome="accepted"}`)).toEqual(new Set([metricsTargets.get(service)]));
      expect(await instances(`agora_commands_duration_seconds_count{service="${service}"}`)).toEqual(new Set([metricsTargets.get(service)]));
    }
    expect((await series('agora_commands_handled_total{service="tribunal",type="SubmitReview",outcome="refused",code="invalid_command"}')).length).toBe(1);
    expect((await series('agora_commands_handled_total{service="tribunal",type="DecideEscalation",outcome="refused",code="forbidden"}')).length).toBe(1);
    // Reactors and deadlines where they run; the relay in the gateway.
    expect(await instances('agora_reactor_lag_seconds{reactor="tribunal-rounds"}')).toEqual(new Set([metricsTargets.get('tribunal')]));
    expect(await instances('agora_reactor_lag_seconds{reactor=~"registry-trust|registry-breaker"}')).toEqual(new Set([metricsTargets.get('registry')]));
    expect(await instances('agora_reactor_delay_seconds_count{reactor="relay"} > 0')).toEqual(new Set([metricsTargets.get('gateway')]));
    expect(await instances('agora_deadline_lateness_seconds_count{scheduler="tribunal-rounds"} > 0')).toEqual(new Set([metricsTargets.get('tribunal')]));
    expect(await instances('agora_deadline_lateness_seconds_count{scheduler="voting"} > 0')).toEqual(new Set([metricsTargets.get('voting')]));
    expect(await instances('agora_store_append_duration_seconds_count{adapter="jetstream"} > 0')).toEqual(
      new Set(COMMAND_SERVICES.map((s) => metricsTargets.get(s))),
    );
    // The gateway's requests and the projections' read-model figures, each in its process's one registry.
    expect(await instances('agora_gateway_http_requests_total')).toEqual(new Set([metricsTargets.get('gateway')]));
    expect(await instances('agora_tribunal_challenge_rate_ratio')).toEqual(new Set([metricsTargets.get('projections')]));
    expect(await instances('agora_chamber_calls_total')).toEqual(new Set([metricsTargets.get('projections')]));
    expect(await instances('agora_debate_lock_attempts_total')).toEqual(new Set([metricsTargets.get('projections')]));
    // The chamber's figures: a consensus and a failure; google's refused call; today's two sessions of the ledger.
    expect((await series('agora_chamber_sessions_concluded_total{outcome=~"consensus|failed"} == 1')).length).toBe(2);
    expect((await series('agora_chamber_call_errors_total{provider="google",kind="http"} > 0')).length).toBe(1);
    expect((await series('agora_chamber_day_sessions{kind="reserved"}'))[0]?.value[1]).toBe('2');
    expect((await series('agora_chamber_day_sessions{kind="limit"}'))[0]?.value[1]).toBe('10');
    // The debate's: three lock attempts, one passed; one cheap concession.
    expect((await series('agora_debate_lock_attempts_total{result="passed"}'))[0]?.value[1]).toBe('1');
    expect((await series('agora_debate_lock_attempts_total{result="failed"}'))[0]?.value[1]).toBe('2');
    expect((await series('agora_debate_cheap_concessions_total'))[0]?.value[1]).toBe('1');
  });

  it('answers every panel query of every checked-in dashboard with at least one series', async () => {
    const files = readdirSync(DASHBOARDS).filter((f) => f.endsWith('.json'));
    expect(files.sort()).toEqual(['agora-chamber.json', 'agora-debate.json', 'agora-dialectic.json', 'agora-overview.json', 'agora-platform.json', 'agora-tribunal.json', 'agora-voting.json']);
    const problems: string[] = [];
    let queries = 0;
    for (const file of files) {
      const dashboard = JSON.parse(readFileSync(join(DASHBOARDS, file), 'utf8')) as { panels: { type: string; title: string; targets?: { expr: string }[] }[] };
      for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
        for (const { expr } of panel.targets ?? []) {
          queries += 1;
          const answer = await query(expr);
          if (answer.status !== 'success') problems.push(`${file} "${panel.title}": ${expr}: ${answer.error}`);
          else if ((answer.data?.result.length ?? 0) === 0) problems.push(`${file} "${panel.title}": ${expr}: no series`);
        }
      }
    }
    console.log(`${queries} panel queries of ${files.length} dashboards run against Prometheus; ${queries - problems.length} returned series`);
    expect(problems).toEqual([]);
    expect(queries).toBeGreaterThan(80);
  });

  it('evaluates every SLO rule without error, and fires none of the platform alerts on a healthy Agora', async () => {
    // The audit followed every commit of the plays above as they were stored, and found nothing.
    expect(auditorOutput).not.toMatch(/^finding: /m);
    expect(Number((await series('max(agora_audit_verified_position_events)'))[0]?.value[1])).toBeGreaterThan(200);
    expect((await series('sum(agora_audit_findings_total)'))[0]?.value[1]).toBe('0');
    type Rules = { groups: { name: string; rules: { name: string; type: string; health: string; lastError?: string; state?: string }[] }[] };
    const rules = ((await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: Rules }).data;
    const all = rules.groups.flatMap((g) => g.rules.map((r) => ({ group: g.name, ...r })));
    // Every rule of the file Prometheus loaded (an alert or a recording rule per entry).
    expect(all).toHaveLength((readFileSync(RULES, 'utf8').match(/^\s+- (alert|record): /gm) ?? []).length);
    expect(all.filter((r) => r.health !== 'ok')).toEqual([]);
    // None pending or firing, but the command latency alert may be pending (never firing: it waits 10 min):
    // a service answers about 30 commands here, so one that a loaded 2-core machine (the tests run two
    // suites at a time) holds past 1 s is its p99 (seen once, the debate's, at 2.3 s; each under 0.1 s alone).
    const platformActive = all.filter((r) => r.group === 'agora-platform' && r.type === 'alerting' && r.state !== 'inactive');
    expect(platformActive.filter((r) => !(r.name === 'AgoraCommandLatencyHigh' && r.state === 'pending'))).toEqual([]);
    // The platform SLIs have values: the commands' failure ratio (0) per service, once the rule has
    // two scrapes of the last service's counters.
    const services = async () => (await series('agora:commands_failed:ratio_rate5m')).map((s) => s.metric['service']).sort();
    await waitFor(async () => (await services()).length === COMMAND_SERVICES.length, 'the failure ratio of every service', 20_000);
    expect(await services()).toEqual([...COMMAND_SERVICES].sort());
    expect((await series('agora:commands_failed:ratio_rate5m > 0')).length).toBe(0);
    expect((await series('agora:up:ratio')).map((s) => [s.metric['job'], s.value[1]])).toEqual([['agora', '1']]);
    // The chamber's SLIs: 2 of 10 sessions today; some of the budget used, none of it past 80 %; each
    // provider's error rate, none for openai and anthropic. The debate's are not recorded
    // for one debate (too few to mean anything), and none of the chamber's or debate's alerts fires but
    // the provider error rate's, pending.
    expect((await series('agora:chamber_day_sessions:ratio'))[0]?.value[1]).toBe('0.2');
    expect(Number((await series('agora:chamber_budget_used:ratio'))[0]?.value[1])).toBeGreaterThan(0);
    expect(Number((await series('agora:chamber_budget_used:ratio'))[0]?.value[1])).toBeLessThan(0.8);
    const providerErrors = Object.fromEntries((await series('agora:chamber_call_errors:ratio_rate1h')).map((s) => [s.metric['provider'], Number(s.value[1])]));
    // (NaN, not 0, when Prometheus saw a provider's counters only after its last call: no rate yet.)
    expect(Object.keys(providerErrors).sort()).toEqual(['anthropic', 'google', 'openai']);
    expect(providerErrors['openai']).not.toBeGreaterThan(0);
    expect(providerErrors['anthropic']).not.toBeGreaterThan(0);
    expect(await series('agora:debate_lock_success:ratio')).toEqual([]);
    const active = all.filter((r) => (r.group === 'agora-chamber' || r.group === 'agora-debate') && r.type === 'alerting' && r.state !== 'inactive');
    expect(active.filter((r) => r.name !== 'ChamberProviderErrorRateHigh')).toEqual([]);
  });
});
