/**
 * `npm start` with nothing set closes reads: the README's walkthrough as a process, with the CLI
 * in a second process. The README's `npm run agora -- ...` lines of "Your first agent, step by step"
 * run as printed, from a directory that holds the standalone's data/, and print what the README says
 * they print. The gateway refuses a read without an identity, `agora` reads with the
 * operator key the first start wrote into the data directory, and an agent reads with its own
 * key through `agora token`, as curl would.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agoraCommandLine, REPO_ROOT, runCommand, runToCompletion, startAgoraProcess, type AgoraProcess } from '@agora/testing';

const CLI = 'apps/cli/src/main.ts';

/** The `npm run agora -- ...` lines of the README's section "Your first agent, step by step", in order. */
function readmeWalkthrough(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /\n### Your first agent, step by step\n([\s\S]*?)\n### /.exec(readme)?.[1];
  if (section === undefined) throw new Error('README.md has no section "Your first agent, step by step"');
  return section
    .split('\n')
    .filter((line) => line.startsWith('npm run agora -- '))
    .map((line) => line.replace(/\s+#.*$/, ''));
}

describe('npm start closes reads by default (e2e)', () => {
  let dir: string;
  let agora: AgoraProcess;
  let url: string;
  // AGORA_DATA_DIR as the walkthrough's ./data; AGORA_READS '' is "not set" (the test harness otherwise opens reads).
  const cli = (args: string[], env: Record<string, string> = {}) => runToCompletion(CLI, args, { AGORA_URL: url, AGORA_DATA_DIR: join(dir, 'data'), ...env }, 60_000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-closed-default-'));
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: '' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
  }, 90_000);

  afterAll(async () => {
    await agora?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says so at startup and in /health; a read without a token is refused, /docs and the console stay open', async () => {
    expect(agora.output()).toMatch(/^agora: reads are closed: every read needs a read token/m);
    expect(agora.output()).not.toMatch(/reads are OPEN/);
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', reads: { mode: 'closed', audience: 'agora' } });
    const unsigned = await fetch(`${url}/v1/registry/agents`);
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    expect((await fetch(`${url}/docs/openapi.json`)).status).toBe(200);
    expect((await fetch(`${url}/`)).status).toBe(200);
  });

  it("the README's walkthrough as printed: alice registered, listed, her proposal sent, and the four events it names, for the operator and for alice", async () => {
    const lines = readmeWalkthrough();
    expect(lines.length).toBe(6);
    const printed: { line: string; code: number | null; stdout: string; stderr: string }[] = [];
    for (const line of lines) {
      // As a reader runs it, from the directory that holds data/ (the repository's root for them).
      const run = await runCommand('/bin/sh', ['-c', agoraCommandLine(line)], { cwd: dir, env: { AGORA_URL: url, AGORA_READS: '' }, timeoutMs: 60_000 });
      expect({ line, code: run.code, stderr: run.stderr }).toEqual({ line, code: 0, stderr: line.includes('keys new') ? expect.stringMatching(/^wrote data\/alice\.key\.json/) : '' });
      printed.push({ line, ...run });
    }
    expect(printed.find((p) => p.line.includes('agents list'))!.stdout).toMatch(/^alice\s+alice\s+executive/m);
    // "alice registered, the proposal submitted, a review round requested, and the proposal escalated to a human"
    const types = (p: { stdout: string }) => p.stdout.trim().split('\n').map((l) => l.split(' ')[2]);
    const tails = printed.filter((p) => p.line.includes('events tail'));
    expect(tails).toHaveLength(2); // the operator's, then alice's with her own key
    for (const tail of tails) expect(types(tail)).toEqual(['AgentRegistered', 'ProposalSubmitted', 'ReviewRoundRequested', 'ProposalEscalated']);
  }, 180_000);

  it('agora reads with the operator key of the data directory, an agent with its own through agora token', async () => {
    const alice = join(dir, 'data', 'alice.key.json');
    const token = await cli(['token', '--key', alice]);
    expect(token.code).toBe(0);
    const mine = await fetch(`${url}/v1/proposal/proposals/p1`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { result: { proposer: string } }).result.proposer).toBe('alice');
    // Without an identity the same read is refused, and with no data directory key the CLI reads unsigned and is refused too.
    expect((await fetch(`${url}/v1/proposal/proposals/p1`)).status).toBe(401);
    const elsewhere = await cli(['agents', 'list'], { AGORA_DATA_DIR: join(dir, 'nowhere') });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/unauthenticated/);
  }, 120_000);
});
