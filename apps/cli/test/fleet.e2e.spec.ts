/**
 * `agora fleet run` as a user runs it: a process reading a fleet file, registering its agents with
 * the operator key, its models pointed at the provider stand-ins by the environment; three
 * validators vote in a session, each action printed (who, what, cost); Ctrl-C stops it cleanly. A
 * fleet file with a mistake is refused, naming the mistake's path.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetStandInScript } from '@agora/participants';
import { StandIns } from '@agora/providers';
import { Agora } from '@agora/sdk';
import { processEnvironment, REPO_ROOT, runToCompletion, sourceArgs, startAgoraProcess, startNatsServer, waitFor, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';

const CLI = 'apps/cli/src/main.ts';

describe('agora fleet run (e2e)', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let agora: AgoraProcess;
  let stands: StandIns;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-fleet-cli-'));
    nats = await startNatsServer();
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    stands = await StandIns.start(fleetStandInScript());
  }, 120_000);

  afterAll(async () => {
    await stands?.close();
    await agora?.stop();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a fleet file with a mistake, naming where it is', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ agents: [{ id: 'aegis', keyFile: 'aegis.json', roles: ['validator'], model: 'gpt-4' }] }));
    const bad = await runToCompletion(CLI, ['fleet', 'run', file, '--url', url], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(`error invalid_fleet_file: ${file}: agents[0].model: a model is written <provider>:<model>, e.g. openai:gpt-4.1\n`);
    await writeFile(file, JSON.stringify({ agents: [{ id: 'aegis', keyFile: 'aegis.json', roles: ['validator'], model: 'openai:gpt-9' }] }));
    const unpriced = await runToCompletion(CLI, ['fleet', 'run', file, '--url', url], {});
    expect(unpriced.stderr).toMatch(/^error invalid_fleet_file: .*bad\.json: model openai:gpt-9 has no price in the price table/);
  }, 60_000);

  it('registers the agents, plays their roles, prints each action with its cost, and stops on Ctrl-C', async () => {
    const file = join(dir, 'fleet.json');
    const validators = { aegis: 'security', ledger: 'compliance', pilot: 'operations' };
    await writeFile(file, JSON.stringify({ defaults: { model: 'openai:gpt-4.1', budget: 0.5 }, agents: Object.entries(validators).map(([id, s]) => ({ id, keyFile: `keys/${id}.key.json`, roles: ['validator'], specializations: [s] })) }));
    const operatorKeyFile = join(dir, 'data', 'operator.key.json');
    const child = spawn(process.execPath, [...sourceArgs(CLI), 'fleet', 'run', file, '--url', url, '--operator-key', operatorKeyFile], { cwd: REPO_ROOT, env: processEnvironment(stands.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /3 participants running/.test(stderr), `the fleet to start (${stderr})`, 60_000);
      expect(stderr).toContain('registered: aegis, ledger, pilot');
      expect(stderr).toContain('budgets set: aegis 0.5 USD, ledger 0.5 USD, pilot 0.5 USD');
      const root = await Agora.connect({ url, signer: { keyFile: operatorKeyFile } });
      try {
        const created = await root.send('CreateVotingSession', { requestId: 'cli-fleet', actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out 4.2, staged.' });
        const session = await root.query('GetVotingSessionByRequest', { requestId: 'cli-fleet' });
        const decided = await root.waitForDecision(session.sessionId, { after: created.position, timeoutMs: 60_000 });
        expect(decided.votes.map((v) => `${v.validator}:${v.decision}`).sort()).toEqual(['aegis:approve', 'ledger:approve', 'pilot:approve']);
      } finally {
        await root.close();
      }
      await waitFor(() => stdout.split('\n').filter((l) => / \(validator\) voted approve/.test(l)).length === 3, 'three action lines', 30_000);
      for (const id of Object.keys(validators)) expect(stdout).toMatch(new RegExp(`^\\S+ ${id} \\(validator\\) voted approve \\(0\\.8\\) in \\S+ \\(deploy_production\\) \\[openai:gpt-4\\.1, 1 call, 0\\.\\d{6} USD\\]$`, 'm'));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/fleet: stopped\n$/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 150_000);
});
