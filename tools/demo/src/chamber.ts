import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { panelScript } from '@agora/chamber';
import { describeEntry } from '@agora/cli';
import { StandIns } from '@agora/providers';
import { Fleet, until } from './fleet.js';

type Say = (line: string) => void;

const KEYS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'] as const;
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CHAMBER_QUESTION = 'Should a five-person team rewrite its billing service in Rust this quarter, or harden the existing one?';
export const CHAMBER_CONTEXT = 'The billing service is 40k lines of Python, 3 incidents last quarter (two from race conditions), no Rust experience on the team, a pricing change due in 10 weeks.';

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** The panel's stand-in answers to CHAMBER_QUESTION: two of three models agree at once, the third comes round in cross-examination. */
export function chamberStandInScript(): ReturnType<typeof panelScript> {
  return panelScript({ blind: { openai: 'Harden the existing service', anthropic: 'Harden the existing service', google: 'Rewrite in Rust' }, cross: { google: 'Harden the existing service' }, claims: { google: ['a rewrite removes the race conditions'], openai: ['the pricing change lands in 10 weeks'], anthropic: ['nobody on the team knows Rust'] }, delayMs: 300 });
}

/** Starts Agora (standalone, from dist/) and resolves once it says it is ready. */
export function startAgora(env: NodeJS.ProcessEnv, say: Say): Promise<ChildProcess> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'apps/standalone/dist/main.js')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('agora: ready')) {
        for (const line of output.split('\n').filter((l) => /chamber|providers/.test(l))) say(`  ${line}`);
        child.stdout!.off('data', onData);
        resolveStart(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`agora exited (${code}) before it was ready:\n${output}`)));
  });
}

/**
 * The Deliberation Chamber end to end: starts Agora in one process with its own data directory,
 * the panel's providers pointed at stand-in servers speaking the OpenAI, Anthropic and Gemini wire
 * APIs (or, with the three API keys set, at the real providers), proposes a question as a pipeline
 * agent, approves it with the operator key, and prints each phase as it is recorded, then the
 * outcome, the cost and the chamber's metrics.
 */
export async function chamberDemo(say: Say, options: { dataDir?: string }): Promise<void> {
  const real = KEYS.every((k) => Boolean(process.env[k]));
  let stands: StandIns | undefined;
  let providerEnv: Record<string, string> = {};
  if (real) {
    say('API keys for OpenAI, Anthropic and Google are set: the panel calls the real providers (this costs money; the session is capped by its ceiling).');
  } else {
    stands = await StandIns.start(chamberStandInScript());
    providerEnv = stands.env;
    say(`No API keys set (${KEYS.join(', ')}): starting stand-in servers that speak each provider's wire API, so the real adapters run unchanged:`);
    for (const [name, server] of Object.entries(stands.servers)) say(`  ${name.padEnd(9)} ${server.baseUrl}`);
  }
  // Its own data directory, removed at the end, unless --data names one to keep (and read afterwards).
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agora-chamber-demo-'));
  const temporary = options.dataDir === undefined;
  const port = await freePort();
  const metricsPort = await freePort();
  say(`\nstarting Agora (data in ${dataDir}, gateway on port ${port})`);
  const agora = await startAgora({ ...process.env, ...providerEnv, AGORA_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1', AGORA_CHAMBER_MIN_SAMPLE: '1' }, say);
  try {
    const url = `http://127.0.0.1:${port}`;
    const fleet = Fleet.fromOperatorKeyFile(url, join(dataDir, 'operator.key.json'), dataDir, say);
    await fleet.enlist({ pipeline: { roles: ['executive'] } });
    const sessionId = `demo-${Date.now().toString(36)}`;
    say(`\npipeline proposes chamber session ${sessionId}:\n  "${CHAMBER_QUESTION}"`);
    await fleet.must('pipeline', 'ProposeChamberSession', { sessionId, question: CHAMBER_QUESTION, context: CHAMBER_CONTEXT, rationale: 'A wrong call costs a quarter; one model may share our blind spot.' });
    const before = await fleet.query('GetChamberSession', { sessionId });
    say(`  awaiting approval; nothing is called until an operator approves (at most ${before.summary.maxCost} ${before.summary.currency})`);
    const forged = await fleet.send('pipeline', 'ApproveChamberSession', { sessionId });
    say(`  the pipeline agent tries to approve its own session: ${forged.ok ? 'accepted?!' : `refused (${forged.error.code})`}`);
    await fleet.must('root', 'ApproveChamberSession', { sessionId, note: 'go' });
    say('  the operator approves with the operator key');
    say('  (the models see each other\'s answers under letters, shuffled per phase: a letter names one model in the\n   cross-examination and maybe another in the arbiter\'s phase; the model behind each is printed beside it)\n');
    let shown = 0;
    const final = await until(
      'the session to conclude',
      async () => {
        const view = await fleet.query('GetChamberSession', { sessionId });
        for (const entry of view.transcript.slice(shown)) say(describeEntry(entry, view));
        shown = view.transcript.length;
        return ['consensus', 'no_consensus', 'failed'].includes(view.summary.status) && view.summary.pendingCalls === 0 ? view : undefined;
      },
      real ? 600_000 : 60_000,
    );
    say(`\noutcome: ${final.summary.status}; cost ${final.summary.cost} ${final.summary.currency} (reserved at most ${final.summary.maxCost})`);
    await fleet.must('root', 'RecordChamberFollowUp', { sessionId, decision: 'accepted', reason: 'matches what the team saw in the incidents' });
    say('the operator records the follow-up: accepted');
    const budget = await until('the ledger to settle', async () => {
      const b = await fleet.query('GetChamberBudget', {});
      return b.spent > 0 ? b : undefined;
    });
    say(`budget this month: ${budget.spent} ${budget.currency} spent, ${budget.reserved} reserved, of ${budget.monthlyBudget}; ${budget.sessionsToday} of ${budget.sessionsPerDay} sessions today`);
    const metrics = await until('the chamber metrics', async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return /agora_chamber_sessions_concluded_total\{outcome="consensus"\} [1-9]|agora_chamber_sessions\{status="(no_consensus|failed)"\} [1-9]/.test(text) ? text : undefined;
    });
    say('\n/metrics (chamber):');
    for (const line of metrics.split('\n').filter((l) => /^agora_chamber_(sessions|sessions_concluded_total|divergence_ratio|cross_examination_ratio|arbiter_own_provider_win_ratio|lift_ratio|month_cost|calls_total|conformity_changes_total)/.test(l))) say(`  ${line}`);
    // The demo's Agora stops with it: the transcript is read from its log afterwards only when --data kept it.
    const show = `npm run agora -- chamber show ${sessionId} --full --read-key ${temporary ? '<dir>' : dataDir}/operator.key.json`;
    say(
      temporary
        ? `\nthis Agora stops with the demo and its data directory is removed; to read the whole transcript afterwards, run the demo with --data <dir>, then AGORA_DATA_DIR=<dir> npm start and ${show}`
        : `\nthe whole transcript, once Agora runs on this log (AGORA_DATA_DIR=${dataDir} npm start): ${show}`,
    );
    if (stands) say(`stand-ins received ${stands.requests.length} requests; the session was billed as their token counts say, at the configured prices`);
  } finally {
    agora.kill('SIGTERM');
    await new Promise((r) => agora.once('exit', r));
    await stands?.close();
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  }
}
