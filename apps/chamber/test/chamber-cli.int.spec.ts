// `agora chamber ask | approve | reject | watch | show`: the built CLI run as a child process the
// way a person runs it, against a real gateway with the chamber service behind it (in-process
// transport, embedded store), the panel's providers pointed at stand-in servers.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the chamber behind a real gateway, as standalone mode wires them.
import { startGateway, type Gateway } from '@agora/gateway';
import { generateKeyPair } from '@agora/identity';
import { chamberPolicyFromEnv, providersConfigFromEnv, StandIns } from '@agora/providers';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { builtEntry, embeddedAgora } from '@agora/testing';
import { panelScript, startChamberService, type RunningChamber } from '../src/index.js';

/** The built `agora` (npm test builds before its stages). */
let CLI: string;

describe('agora chamber (the CLI against a gateway and the chamber)', () => {
  let dir: string;
  let keyFile: string;
  let context: ServiceContext;
  let chamber: RunningChamber;
  let gateway: Gateway;
  let stands: StandIns;

  function agora(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, AGORA_URL: gateway.url }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`agora ${args.join(' ')} did not exit in time\n${stdout}${stderr}`));
      }, 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout, stderr });
      });
    });
  }

  beforeAll(async () => {
    CLI = builtEntry('cli');
    dir = mkdtempSync(join(tmpdir(), 'agora-chamber-cli-'));
    const root = generateKeyPair();
    keyFile = join(dir, 'root.key.json');
    writeFileSync(keyFile, JSON.stringify({ agentId: 'root', ...root }), { mode: 0o600 });
    stands = await StandIns.start(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'no' }, cross: { google: 'yes' } }));
    const providers = providersConfigFromEnv(stands.env);
    context = await openServiceContext({ ...embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }), requestTimeoutMs: 5_000 });
    chamber = await startChamberService(context, { logger: false, providers, env: stands.env, policy: chamberPolicyFromEnv({}, providers) });
    gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false });
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    await chamber?.close();
    await context?.close();
    await stands?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks, approves, watches to the outcome and shows the transcript verbatim; a rejected session calls nothing', async () => {
    const ask = await agora(['chamber', 'ask', 'Should we enter market X?', '--why', 'a wrong call costs a year', '--context', 'Revenue is flat.', '--session', 'cli-1', '--key', keyFile]);
    expect(ask).toMatchObject({ code: 0, stderr: '' });
    expect(ask.stdout).toMatch(/session cli-1: awaiting an operator's approval/);
    expect(stands.requests).toHaveLength(0);

    expect(await agora(['chamber', 'approve', 'cli-1', '--key', keyFile])).toMatchObject({ code: 0 });
    const watch = await agora(['chamber', 'watch', 'cli-1', '--interval', '200']);
    expect(watch.code).toBe(0);
    expect(watch.stdout).toMatch(/ChamberDivergenceMeasured \(blind\): score 0.3333 > threshold 0.3: divergent/);
    expect(watch.stdout).toMatch(/ChamberPositionChanged: panelist 2 .*"no" → "yes"/);
    expect(watch.stdout).toMatch(/ChamberSessionConcluded: CONSENSUS/);
    expect(watch.stdout).toMatch(/\[consensus\] answered: .*cost so far 0\.\d{4} USD/);

    const show = await agora(['chamber', 'show', 'cli-1', '--full']);
    expect(show.code).toBe(0);
    for (const request of stands.requests) expect(show.stdout).toContain(request.prompt.split('\n')[0]!);
    expect(show.stdout).toContain('Revenue is flat.');

    expect(await agora(['chamber', 'ask', 'Another?', '--why', 'w', '--session', 'cli-2', '--key', keyFile])).toMatchObject({ code: 0 });
    const before = stands.requests.length;
    expect(await agora(['chamber', 'reject', 'cli-2', '--reason', 'not now', '--key', keyFile])).toMatchObject({ code: 0 });
    expect((await agora(['chamber', 'show', 'cli-2'])).stdout).toMatch(/^chamber session cli-2: rejected/);
    expect(stands.requests.length).toBe(before);
    const again = await agora(['chamber', 'approve', 'cli-2', '--key', keyFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/error illegal_state: chamber session cli-2 is rejected, not awaiting approval/);

    expect(await agora(['chamber', 'ask', 'A third?', '--why', 'w', '--session', 'cli-3', '--key', keyFile])).toMatchObject({ code: 0 });
    const cancel = await agora(['chamber', 'cancel', 'cli-3', '--reason', 'the question is moot', '--key', keyFile]);
    expect(cancel).toMatchObject({ code: 0, stderr: '' });
    const shown = (await agora(['chamber', 'show', 'cli-3'])).stdout;
    expect(shown).toMatch(/^chamber session cli-3: cancelled/);
    expect(shown).toMatch(/ChamberSessionCancelled by \S+: the question is moot/);
    expect(stands.requests.length).toBe(before);
    expect((await agora(['chamber', 'cancel', 'cli-3', '--key', keyFile])).code).toBe(2); // --reason is required
  }, 90_000);
});
