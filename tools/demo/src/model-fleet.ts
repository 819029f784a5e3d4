import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_TOPIC } from '@agora/domain-debate';
import { describeAction, fleetStandInScript, parseFleetFile, startFleet, type ParticipantAction } from '@agora/participants';
import { DEFAULT_PRICES, ProviderLayer, providersConfigFromEnv, StandIns } from '@agora/providers';
import { Agora, waitOnLog } from '@agora/sdk';
import { CHAMBER_CONTEXT, CHAMBER_QUESTION, REPO_ROOT, chamberStandInScript, freePort, startAgora } from './chamber.js';

type Say = (line: string) => void;

const KEYS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'] as const;
const PROTOCOL: Record<ParticipantAction['role'], string> = { reviewer: 'tribunal', executive: 'tribunal', validator: 'vote', dialectic: 'recovery', debater: 'debate' };

/**
 * Every role played by models: starts Agora in one process with its own data directory, the three
 * providers' stand-in servers (or, with the three API keys set, the real providers), and the example
 * fleet (examples/fleet/fleet.json, its keys in the data directory); then a proposal reviewed by four reviewers, revised
 * and approved; a vote by three validators; a recovery by two agents; a debate; a question put to the
 * Deliberation Chamber, whose panel and arbiter are the chamber service's own models. Each action and
 * each decision is printed with its cost.
 */
export async function modelFleetDemo(say: Say, options: { dataDir?: string }): Promise<void> {
  const real = KEYS.every((k) => Boolean(process.env[k]));
  const stands = real ? undefined : await StandIns.start(fleetStandInScript());
  // The chamber's panel is called by the chamber service itself, with its own prompts: stand-ins of its own.
  const panel = real ? undefined : await StandIns.start(chamberStandInScript());
  if (stands) {
    say(`No API keys set (${KEYS.join(', ')}): stand-in servers speak each provider's wire API, so the real adapters run unchanged:`);
    for (const [name, server] of Object.entries(stands.servers)) say(`  ${name.padEnd(9)} ${server.baseUrl}`);
  } else {
    say('API keys for OpenAI, Anthropic and Google are set: the fleet calls the real providers (this costs money; each agent is capped by its budget).');
  }
  const layer = stands
    ? new ProviderLayer({ providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 30_000, maxAttempts: 2, backoffMs: 100 }, stands.env)
    : new ProviderLayer(providersConfigFromEnv(process.env), process.env);
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agora-fleet-demo-'));
  const port = await freePort();
  say(`\nstarting Agora (data in ${dataDir}, gateway on port ${port})`);
  const agora = await startAgora({ ...process.env, ...(panel?.env ?? {}), AGORA_CHAMBER_MIN_SAMPLE: '1', AGORA_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(await freePort()), METRICS_HOST: '127.0.0.1' }, say);
  const costs = new Map<string, number>();
  let started: Awaited<ReturnType<typeof startFleet>> | undefined;
  try {
    const url = `http://127.0.0.1:${port}`;
    const operatorKeyFile = join(dataDir, 'operator.key.json');
    const fleet = parseFleetFile(readFileSync(join(REPO_ROOT, 'examples/fleet/fleet.json'), 'utf8'), join(dataDir, 'fleet.json'));
    say(`\nthe fleet (examples/fleet/fleet.json, keys in ${join(dataDir, 'keys')}):`);
    for (const a of fleet.agents) say(`  ${a.id.padEnd(10)} ${a.roles.join(', ').padEnd(22)} ${a.model}${a.constitutions.length ? ` (${a.constitutions.join(', ')})` : ''}${a.specializations.length ? ` (${a.specializations.join(', ')})` : ''}`);
    started = await startFleet({
      fleet,
      layer,
      connection: { url, operatorKeyFile },
      onAction: (action) => {
        costs.set(PROTOCOL[action.role], (costs.get(PROTOCOL[action.role]) ?? 0) + action.cost);
        say(`  ${describeAction(action, layer.currency)}`);
      },
      onRefused: (agent, role, error, event) => say(`  ${agent} (${role}) refused on ${event.type}: ${error.code ?? ''} ${error.message}`),
    });
    await started.ready;
    // A loop that stops (a handler threw, Agora stayed unreachable) ends the demo at once, saying why.
    const stopped = started.done.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(new Error(`a participant stopped: ${(error as Error).message}`)),
    );
    stopped.catch(() => undefined); // seen by whoever waits; not an unhandled rejection otherwise
    const unless = <T>(work: Promise<T>): Promise<T> => Promise.race([work, stopped]);
    say(`registered ${started.connection.registered.join(', ')}; budgets set: ${started.connection.budgets.join(', ')}; ${started.loops.length} participants running`);
    const client = (id: string) => started!.connection.clients.get(id)!;
    const cost = (protocol: string) => `${(costs.get(protocol) ?? 0).toFixed(6)} ${layer.currency}`;
    const run = Date.now().toString(36);

    const proposalId = `fleet-${run}`;
    say(`\n1. tribunal: seldon proposes ${proposalId}`);
    const submitted = await client('seldon').send('SubmitProposal', {
      proposalId,
      title: 'Move billing to the new payment provider',
      problem: 'The current provider fails 2% of card payments and its contract ends next quarter.',
      body: 'Switch all billing traffic to the new provider on Monday at 09:00, in one step, and retire the old integration the same day.',
      evidence: [{ ref: 'd/7c1e2a90', summary: 'Last quarter the current provider failed 2.1% of card payments' }],
    });
    const verdict = await unless(client('seldon').waitForVerdict(proposalId, { after: submitted.position, final: true, timeoutMs: real ? 600_000 : 180_000 }));
    say(`   decision: ${verdict.status} after ${verdict.rounds.length} rounds and ${verdict.revision - 1} revision(s); objections ${verdict.objections.map((o) => `${o.constitution} ${o.status}`).join(', ') || 'none'}; cost ${cost('tribunal')}`);

    say('\n2. vote: nova asks to run a high-risk action');
    const created = await client('nova').send('CreateVotingSession', { requestId: `fleet-deploy-${run}`, actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out billing 4.2 behind a feature flag, 10% of traffic first, rollback by flag.' });
    const { sessionId } = await client('nova').query('GetVotingSessionByRequest', { requestId: `fleet-deploy-${run}` });
    const decided = await unless(client('nova').waitForDecision(sessionId, { after: created.position, timeoutMs: real ? 600_000 : 120_000 }));
    say(`   decision: ${decided.recommendation?.decision} (${decided.consensus}); votes ${decided.votes.map((v) => `${v.validator} ${v.decision} ${v.confidence}`).join(', ')}; cost ${cost('vote')}`);

    say('\n3. recovery: nova reports a risk above its breaker threshold and is paused');
    const reported = await client('nova').send('ReportHealth', { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } });
    let recovery: string | undefined;
    for await (const event of client('nova').events({ categories: ['dialectic_session'], types: ['RecoveryOpened'], after: reported.position!, signal: AbortSignal.timeout(60_000) })) {
      if ((event.data as { agentId: string }).agentId === 'nova') {
        recovery = (event.data as { sessionId: string }).sessionId;
        break;
      }
    }
    if (!recovery) throw new Error('no recovery opened for nova');
    const resolved = await unless(client('nova').waitForResolution(recovery, { after: reported.position, final: true, timeoutMs: real ? 600_000 : 120_000 }));
    say(`   decision: ${resolved.status}${resolved.resolved ? `: ${resolved.resolved.resolution.rootCause}; conditions ${JSON.stringify(resolved.resolved.resolution.conditions)}` : ''} (reviewer ${resolved.reviewer}); cost ${cost('recovery')}`);

    const debateId = `fleet-debate-${run}`;
    const debaters = fleet.agents.filter((a) => a.roles.includes('debater'));
    say(`\n4. debate: "${EXAMPLE_TOPIC}", ${debaters.map((d) => d.id).join(' vs ')}`);
    const opened = await client(debaters[0]!.id).send('OpenDebate', { debateId, topic: EXAMPLE_TOPIC, participants: debaters.map((d) => ({ agentId: d.id, persona: d.persona ?? d.id })) });
    const reader = client(debaters[0]!.id);
    const debate = await unless(waitOnLog(reader, { category: 'debate', streamId: `debate-${debateId}`, what: `the debate ${debateId} to complete`, read: () => reader.query('GetDebate', { debateId }), done: (d) => d.status === 'complete' }, { after: opened.position!, timeoutMs: real ? 900_000 : 300_000 }));
    const main = debate.threads.find((t) => t.threadId === debate.primaryThreadId) ?? debate.threads[0]!;
    const positions = Object.entries(main.crux?.positions ?? {}).map(([agent, p]) => `${agent} ${p.side} (${p.confidence})`).join(', ');
    say(`   decision: ${debate.outcome}; ${debate.threads.length} thread(s); crux: "${main.crux?.question ?? '(none)'}" ${positions}${main.crux?.validated ? ', validated' : ''}; cost ${cost('debate')}`);
    say('\n5. chamber: seldon puts a question to the panel of models; the operator approves the spend');
    const chamberId = `fleet-chamber-${run}`;
    const proposed = await client('seldon').send('ProposeChamberSession', { sessionId: chamberId, question: CHAMBER_QUESTION, context: CHAMBER_CONTEXT, rationale: 'A wrong call costs a quarter; one model may share our blind spot.' });
    const operator = await Agora.connect({ url, signer: { keyFile: operatorKeyFile } });
    try {
      await operator.send('ApproveChamberSession', { sessionId: chamberId, note: 'go' });
      const chamber = await unless(
        waitOnLog(operator, { category: 'chamber_session', streamId: `chamber_session-${chamberId}`, what: `the chamber session ${chamberId} to conclude`, read: () => operator.query('GetChamberSession', { sessionId: chamberId }), done: (v) => ['consensus', 'no_consensus', 'failed'].includes(v.summary.status) && v.summary.pendingCalls === 0 }, { after: proposed.position!, timeoutMs: real ? 600_000 : 120_000 }),
      );
      costs.set('chamber', chamber.summary.cost);
      say(`   decision: ${chamber.summary.status}; ${chamber.transcript.length} entries in the transcript; cost ${chamber.summary.cost} ${chamber.summary.currency} (reserved at most ${chamber.summary.maxCost})`);
    } finally {
      await operator.close();
    }
    say(`\ntotal cost: ${[...costs.values()].reduce((a, b) => a + b, 0).toFixed(6)} ${layer.currency}${stands && panel ? `; the stand-ins received ${stands.requests.length + panel.requests.length} requests` : ''}`);
    say(`every decision re-verified, every model call attributed to its agent and budget: AGORA_DATA_DIR=${dataDir} AGORA_OPERATOR_KEY_FILE=${operatorKeyFile} npm run agora -- audit`);
  } finally {
    await started?.close();
    agora.kill('SIGTERM');
    await new Promise((r) => agora.once('exit', r));
    await stands?.close();
    await panel?.close();
  }
}
