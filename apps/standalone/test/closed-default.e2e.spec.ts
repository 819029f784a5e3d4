/**
 * `npm start` with nothing set closes reads: the README's walkthrough as a process, with the CLI
 * in a second process. The gateway refuses a read without an identity, `agora` reads with the
 * operator key the first start wrote into the data directory, and an agent reads with its own
 * key through `agora token`, as curl would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToCompletion, startAgoraProcess, type AgoraProcess } from '@agora/testing';

const CLI = 'apps/cli/src/main.ts';

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

  it('the walkthrough: agora reads with the operator key of the data directory, an agent with its own through agora token', async () => {
    const alice = join(dir, 'data', 'alice.key.json');
    expect((await cli(['keys', 'new', '--agent', 'alice', '--out', alice])).code).toBe(0);
    const registered = await cli(['agents', 'register', '--key', join(dir, 'data', 'operator.key.json'), '--agent-key', alice, '--id', 'alice', '--roles', 'executive']);
    expect(registered.code).toBe(0);
    const listed = await cli(['agents', 'list']);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(listed.stdout).toMatch(/^alice\s+alice\s+executive/m);
    const sent = await cli(['send', 'SubmitProposal', '{"proposalId":"p1","title":"Onboarding","body":"Add tutorial tooltips","problem":"Users drop off"}', '--key', alice]);
    expect(sent.code).toBe(0);

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
