/**
 * The demos as a newcomer runs them: in README.md's order, one after another, against one Agora
 * (`npm start`, the one-process standalone, started as a user would). Each must pass whatever ran
 * before it: the MCP demo's vote draws from every validator the voting demo registered. The
 * chamber demo starts its own Agora in a data directory of its own, and removes it at the end.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToCompletion, startAgoraProcess, type AgoraProcess } from '@agora/testing';

/** What README.md says to start Agora with for the tribunal demo: a round may expire in seconds. */
const TRIBUNAL_POLICY = { minRoundDeadlineMs: 1000 };
/** Scripted, never a paid model: the demos call providers when these are set. */
const NO_PROVIDER_KEYS = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GOOGLE_GENERATIVE_AI_API_KEY: '' };

describe('the demos in README order on one system (e2e)', () => {
  let dir: string;
  let agora: AgoraProcess;
  let url: string;

  const demo = async (scenario: string, args: string[] = [], env: Record<string, string> = {}) => {
    const run = await runToCompletion('tools/demo/src/main.ts', [scenario, ...args], { AGORA_READS: '', ...NO_PROVIDER_KEYS, ...env }, 180_000);
    if (run.code !== 0) throw new Error(`demo ${scenario} failed (${run.code}):\n${run.stdout}${run.stderr}`);
    return run.stdout;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-demos-e2e-'));
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_TRIBUNAL_POLICY: JSON.stringify(TRIBUNAL_POLICY), AGORA_READS: '', ...NO_PROVIDER_KEYS });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
  }, 120_000);

  afterAll(async () => {
    await agora?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('runs tribunal, voting, dialectic, debate and mcp one after another against the same Agora', async () => {
    const against = ['--url', url, '--data', join(dir, 'data'), '--metrics', `${url}/metrics`];
    for (const scenario of ['tribunal', 'voting', 'dialectic', 'debate']) await demo(scenario, against);
    const mcp = await demo('mcp', against);
    // All five validators of the voting demo were drawn, and all of them voted.
    for (const validator of ['aegis', 'ledger', 'pilot', 'sage', 'tally']) expect(mcp).toContain(`${validator} votes approve`);
    expect(mcp).toMatch(/create_entities\(staging-token, credential\): ran/);
    expect(mcp).toMatch(/create_entities\(prod-db-password, credential\): refused: tool_call_denied: the validators' vote refused/);
  }, 900_000);

  it('says how to point a demo at Agora when nothing answers at its URL (Agora started on another PORT)', async () => {
    const run = await runToCompletion('tools/demo/src/main.ts', ['voting', '--url', 'http://127.0.0.1:1', '--data', join(dir, 'data')], {}, 60_000);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot reach the gateway at http:\/\/127\.0\.0\.1:1.*\nIs Agora running there\? npm start listens on PORT \(8080 unless set\): give the demo --url http:\/\/127\.0\.0\.1:<PORT>, or set AGORA_URL\./);
  }, 90_000);

  it('runs the chamber demo on an Agora of its own, and leaves no data directory behind nor points at its stopped gateway', async () => {
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const out = await demo('chamber', [], { TMPDIR: tmp });
    expect(out).toMatch(/outcome: consensus/);
    expect(readdirSync(tmp).filter((name) => name.startsWith('agora-chamber-demo-'))).toEqual([]);
    expect(out).not.toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/v1\/chamber|--url http:\/\/127\.0\.0\.1:\d+/);
    // Letters are shuffled per phase, and the output says which phase a letter belongs to.
    expect(out).toContain('under letters, shuffled per phase');
    expect(out).toMatch(/rests on \(the arbiter's labels, shuffled anew\): [A-Z] \(/);
  }, 300_000);
});
