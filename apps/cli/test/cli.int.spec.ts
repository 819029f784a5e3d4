// The built `agora` command (apps/cli/dist/main.js), run as a child process the way a person runs
// it, against a real gateway with the real registry service behind it (in-process transport,
// embedded store in a temporary directory).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type Gateway } from '@agora/gateway';
import { generateKeyPair, parseKeyFile, parseServiceKeyring, type KeyPair } from '@agora/identity';
import { startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { agentsOn, builtEntry, embeddedAgora, runCommand, waitFor, type Finished } from '@agora/testing';

/** The built `agora` (npm test builds before its stages). */
let CLI: string;

describe('the agora command against a gateway', () => {
  let dir: string;
  let root: KeyPair;
  let rootKeyFile: string;
  let context: ServiceContext;
  let registry: { close(): Promise<void> };
  let projections: { close(): Promise<void> };
  let proposals: { close(): Promise<void> };
  let gateway: Gateway;

  /** Runs `agora <args>` to completion, as a person does from `dir`: exit code and output. */
  const agora = (args: readonly string[], options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Finished> =>
    runCommand(process.execPath, [CLI, ...args], { cwd: dir, env: { HOME: dir, AGORA_URL: gateway.url, ...options.env }, timeoutMs: options.timeoutMs ?? 60_000, input: options.input ?? '' });

  function writeKey(name: string, content: Record<string, unknown>): string {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
    return file;
  }

  beforeAll(async () => {
    // The CLI and the libraries it loads, built as `npm run build` builds them.
    CLI = builtEntry('cli');
    dir = mkdtempSync(join(tmpdir(), 'agora-cli-'));
    root = generateKeyPair();
    rootKeyFile = writeKey('root.key.json', { agentId: 'root', ...root });
    context = await openServiceContext({ ...embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }), requestTimeoutMs: 5_000, readModelWaitMs: 300 });
    registry = await startRegistryService(context, { logger: false });
    projections = await startProjectionsService(context, { metricsPort: 0, metricsHost: '127.0.0.1', logger: false });
    proposals = await startProposalService(context, { logger: false });
    gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false });
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    await proposals?.close();
    await projections?.close();
    await registry?.close();
    await context?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('keys new writes a 0600 key file that parseKeyFile accepts, and will not overwrite it without --force', async () => {
    const file = join(dir, 'alice.key.json');
    const made = await agora(['keys', 'new', '--agent', 'alice', '--out', file]);
    expect(made).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ed25519:[A-Za-z0-9_-]{43}\n$/) });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = parseKeyFile(readFileSync(file, 'utf8'));
    expect(key).toMatchObject({ agentId: 'alice', publicKey: made.stdout.trim() });

    const again = await agora(['keys', 'new', '--agent', 'alice', '--out', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists; use --force/);
    expect(parseKeyFile(readFileSync(file, 'utf8')).publicKey).toBe(key.publicKey);

    const printed = await agora(['keys', 'new']);
    expect(printed.code).toBe(0);
    expect(parseKeyFile(printed.stdout).agentId).toBeUndefined();
  }, 120_000);

  it("keys services creates each service's 0600 key file once and the public keys file AGORA_SERVICE_PUBLIC_KEYS reads", async () => {
    const keysDir = join(dir, 'service-keys');
    const made = await agora(['keys', 'services', '--dir', keysDir]);
    expect(made.code).toBe(0);
    const ring = parseServiceKeyring(JSON.parse(readFileSync(join(keysDir, 'public-keys.json'), 'utf8')));
    expect(Object.keys(ring).sort()).toEqual(['chamber', 'debate', 'dialectic', 'projections', 'proposal', 'registry', 'tribunal', 'voting']);
    const tribunal = parseKeyFile(readFileSync(join(keysDir, 'tribunal.key.json'), 'utf8'));
    expect(tribunal).toMatchObject({ agentId: 'service:tribunal', publicKey: ring['tribunal']![0]!.publicKey });
    expect(statSync(join(keysDir, 'tribunal.key.json')).mode & 0o777).toBe(0o600);
    // Run again: the keys stay.
    expect((await agora(['keys', 'services', '--dir', keysDir])).code).toBe(0);
    expect(parseKeyFile(readFileSync(join(keysDir, 'tribunal.key.json'), 'utf8')).publicKey).toBe(tribunal.publicKey);
    expect(await agora(['keys', 'new', '--service', 'nope'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--service "nope": one of registry/) });
  }, 120_000);

  it('verify-read-models: an operator has the read models rebuilt and compared; anyone else is refused', async () => {
    const verified = await agora(['verify-read-models', '--key', rootKeyFile]);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringMatching(/^equal +tables:proposals \(\d+ events\)$/m) });
    const stranger = writeKey('stranger.key.json', { agentId: 'root', ...generateKeyPair() });
    expect(await agora(['verify-read-models', '--key', stranger])).toMatchObject({ code: 1, stderr: expect.stringMatching(/bad_signature/) });
  }, 120_000);

  it('agents register signs RegisterAgent with the operator key; agents list shows the agent', async () => {
    const carol = generateKeyPair();
    const carolFile = writeKey('carol.key.json', { agentId: 'carol', ...carol });
    const registered = await agora(['agents', 'register', '--key', rootKeyFile, '--agent-key', carolFile, '--roles', 'executive,reviewer', '--name', 'Carol', '--constitutions', 'risk', '--trust', '700']);
    expect(registered).toMatchObject({ code: 0, stdout: expect.stringMatching(/^RegisterAgent: agent-carol@0 \[AgentRegistered\] at \d+\n$/) });
    const position = /at (\d+)\n$/.exec(registered.stdout)![1]!;
    const dave = await agora(['agents', 'register', '--key', rootKeyFile, '--id', 'dave', '--public-key', generateKeyPair().publicKey, '--roles', 'observer']);
    expect(dave.code).toBe(0);

    const table = await agora(['agents', 'list']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+ROLES\s+TRUST\s+STATUS$/);
    expect(lines).toContainEqual(expect.stringMatching(/^carol\s+Carol\s+executive,reviewer\s+700\s+active$/));
    expect(lines).toContainEqual(expect.stringMatching(/^dave\s+dave\s+observer\s+500\s+active$/));

    const reviewers = await agora(['agents', 'list', '--role', 'reviewer', '--json']);
    expect(reviewers.code).toBe(0);
    const ids = (JSON.parse(reviewers.stdout) as { agents: { agentId: string }[] }).agents.map((a) => a.agentId);
    expect(ids).toContain('carol');
    expect(ids).not.toContain('dave');

    // Read your writes: --min-position with the position the command printed; one the log has not reached is refused after the wait.
    const after = await agora(['agents', 'list', '--min-position', position, '--json']);
    expect(after.code).toBe(0);
    expect((JSON.parse(after.stdout) as { agents: { agentId: string }[] }).agents.map((a) => a.agentId)).toContain('carol');
    const ahead = await agora(['agents', 'list', '--min-position', '999999999']);
    expect(ahead).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error read_model_behind: /) });

    // One agent a request: it follows nextCursor to the end, every agent once, in id order.
    const paged = await agora(['agents', 'list', '--page-size', '1', '--json']);
    const all = await agora(['agents', 'list', '--json']);
    const pagedIds = (JSON.parse(paged.stdout) as { agents: { agentId: string }[] }).agents.map((a) => a.agentId);
    expect(pagedIds).toEqual((JSON.parse(all.stdout) as { agents: { agentId: string }[] }).agents.map((a) => a.agentId));
    expect(pagedIds).toEqual(expect.arrayContaining(['carol', 'dave']));
    expect(pagedIds).toEqual([...pagedIds].sort());
    expect(await agora(['agents', 'list', '--page-size', '1001'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--page-size must be a whole number from 1 to 1000/) });
  }, 120_000);

  it('send signs any command, from an argument, a file or stdin, and prints the reply', async () => {
    await agora(['agents', 'register', '--key', rootKeyFile, '--id', 'erin', '--public-key', generateKeyPair().publicKey, '--roles', 'observer']);
    const inline = await agora(['send', 'UpdateAgent', '{"agentId":"erin","trustScore":650}', '--key', rootKeyFile]);
    expect(inline.code).toBe(0);
    expect(JSON.parse(inline.stdout)).toMatchObject({ ok: true, result: { streamId: 'agent-erin', events: ['AgentUpdated'] } });

    writeFileSync(join(dir, 'update.json'), '{"agentId":"erin","displayName":"Erin"}');
    expect((await agora(['send', 'UpdateAgent', '@update.json', '--key', rootKeyFile])).code).toBe(0);
    const piped = await agora(['send', 'UpdateAgent', '-', '--key', rootKeyFile, '--actor', 'root'], { input: '{"agentId":"erin","trustScore":651}' });
    expect(piped.code).toBe(0);
    const erin = (JSON.parse((await agora(['agents', 'list', '--json'])).stdout) as { agents: { agentId: string; displayName: string; trustScore: number }[] }).agents.find((a) => a.agentId === 'erin');
    expect(erin).toMatchObject({ displayName: 'Erin', trustScore: 651 });
  }, 120_000);

  it('reports a forged signature as bad_signature, with exit 1', async () => {
    // A key file that claims to be root's, with someone else's key.
    const forged = writeKey('forged.key.json', { agentId: 'root', ...generateKeyPair() });
    const result = await agora(['send', 'UpdateAgent', '{"agentId":"erin","trustScore":1}', '--key', forged]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error bad_signature: /);
  }, 120_000);

  it('prints a refusal with its code and details: an unknown command type, a disabled agent', async () => {
    const unknown = await agora(['send', 'LaunchRocket', '{}', '--key', rootKeyFile]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error invalid_command: unknown command type "LaunchRocket"/);
    expect(unknown.stderr).toContain('"knownTypes"');

    const frank = generateKeyPair();
    const frankFile = writeKey('frank.key.json', { agentId: 'frank', ...frank });
    expect((await agora(['agents', 'register', '--key', rootKeyFile, '--agent-key', frankFile, '--roles', 'operator'])).code).toBe(0);
    const disabled = await agora(['agents', 'disable', 'frank', '--reason', 'key leaked', '--key', rootKeyFile]);
    expect(disabled).toMatchObject({ code: 0, stdout: expect.stringMatching(/^DisableAgent: agent-frank@1 \[AgentDisabled\] at \d+\n$/) });
    const refused = await agora(['send', 'UpdateAgent', '{"agentId":"erin","trustScore":2}', '--key', frankFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error actor_disabled: /);
    expect((await agora(['agents', 'list'])).stdout).not.toMatch(/^frank/m);
    expect((await agora(['agents', 'list', '--all'])).stdout).toMatch(/^frank .* disabled$/m);

    // Back under a new key: the one that leaked never signs again.
    const frank2File = writeKey('frank-2.key.json', { agentId: 'frank', ...generateKeyPair() });
    const enabled = await agora(['agents', 'enable', 'frank', '--reason', 'new key issued', '--agent-key', frank2File, '--key', rootKeyFile]);
    expect(enabled).toMatchObject({ code: 0, stdout: expect.stringMatching(/^EnableAgent: agent-frank@3 \[AgentKeyRotated, AgentEnabled\] at \d+\n$/) });
    expect((await agora(['send', 'UpdateAgent', '{"agentId":"frank","displayName":"Frank"}', '--key', frankFile])).stderr).toMatch(/^error bad_signature: /);
    expect(await agora(['send', 'UpdateAgent', '{"agentId":"frank","displayName":"Frank"}', '--key', frank2File])).toMatchObject({ code: 0, stdout: expect.stringContaining(`"revision": 4`) });
  }, 120_000);

  it('events tail --first prints the events, one line each, and resumes with --after', async () => {
    await agora(['agents', 'register', '--key', rootKeyFile, '--id', 'gina', '--public-key', generateKeyPair().publicKey, '--roles', 'validator']);
    const all = await agora(['events', 'tail', '--category', 'agent', '--first', '3']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^\S+ agent-[a-z0-9_-]+@\d+ Agent[A-Za-z]+ \{.*\}$/);
    expect(lines[0]).toMatch(/ AgentRegistered \{"agentId":"/);

    const [secondPosition] = lines[1]!.split(' ');
    const resumed = await agora(['events', 'tail', '--category', 'agent', '--after', lines[0]!.split(' ')[0]!, '--first', '2']);
    expect(resumed.stdout.trimEnd().split('\n')).toEqual(lines.slice(1));
    expect(resumed.stdout.startsWith(`${secondPosition} `)).toBe(true);

    const typed = await agora(['events', 'tail', '--type', 'AgentRegistered', '--first', '2', '--json']);
    const events = typed.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; streamId: string; position: string });
    expect(events.map((e) => e.type)).toEqual(['AgentRegistered', 'AgentRegistered']);
  }, 120_000);

  it('events tail --from-end follows live events only, until Ctrl-C, then exits 0', async () => {
    const child = spawn(process.execPath, [CLI, 'events', 'tail', '--from-end', '--type', 'AgentRegistered'], { cwd: dir, env: { PATH: process.env['PATH'] ?? '', AGORA_URL: gateway.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    try {
      // Agents registered one after another until the tail, connected by then, prints one: only those, in order, and no history.
      const agents = agentsOn(context.client, { root });
      const live: string[] = [];
      await waitFor(
        async () => {
          if (stdout.includes('AgentRegistered')) return true;
          live.push(`hank-${live.length + 1}`);
          await agents.ok('root', 'RegisterAgent', { agentId: live.at(-1)!, publicKey: generateKeyPair().publicKey, displayName: 'hank', roles: ['observer'] });
          await new Promise((r) => setTimeout(r, 250));
          return false;
        },
        'the tail to print a live event',
        30_000,
      );
      await waitFor(() => stdout.includes(`agent-${live.at(-1)!}@0 `), `the tail to print ${live.at(-1)!}`);
      const printed = stdout.trimEnd().split('\n').map((line) => /^\S+ agent-(\S+)@0 AgentRegistered /.exec(line)?.[1] ?? line);
      expect(live.slice(live.length - printed.length)).toEqual(printed);
    } finally {
      // Ctrl-C, also when a check failed: nothing left running.
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 120_000);

  it('outcome report signs ReportOutcome for an executed proposal, once; outcome calibration shows the figures', async () => {
    const seldon = generateKeyPair();
    const seldonFile = writeKey('seldon.key.json', { agentId: 'seldon', ...seldon });
    expect((await agora(['agents', 'register', '--key', rootKeyFile, '--id', 'seldon', '--public-key', seldon.publicKey, '--roles', 'executive'])).code).toBe(0);
    // No tribunal runs here: the proposal stays under review, and its execution is recorded despite that.
    // (Sent again until the proposal service's directory knows seldon: the same submission changes nothing.)
    const submission = JSON.stringify({ proposalId: 'cli-plan', title: 'Plan', body: 'Do it', problem: 'Nothing done' });
    await waitFor(async () => (await agora(['send', 'SubmitProposal', submission, '--key', seldonFile])).code === 0, 'the proposal service to accept seldon');
    const early = await agora(['outcome', 'report', 'cli-plan', '--failed', '--note', 'too early', '--key', seldonFile]);
    expect(early).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error illegal_state: proposal cli-plan has not been executed/) });
    expect((await agora(['send', 'RecordExecution', JSON.stringify({ proposalId: 'cli-plan', summary: 'done' }), '--key', seldonFile])).code).toBe(0);
    expect(await agora(['outcome', 'report', 'cli-plan', '--worked', '--failed', '--note', 'x', '--key', seldonFile])).toMatchObject({ code: 2, stderr: expect.stringMatching(/either --worked or --failed/) });
    const reported = await agora(['outcome', 'report', 'cli-plan', '--failed', '--note', 'nobody came', '--key', seldonFile]);
    expect(reported).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ReportOutcome: proposal-cli-plan@\d+ \[OutcomeReported\] at \d+\n$/) });
    const position = /at (\d+)\n$/.exec(reported.stdout)![1]!;
    const again = await agora(['outcome', 'report', 'cli-plan', '--worked', '--note', 'changed my mind', '--key', rootKeyFile]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error illegal_state: the outcome of proposal cli-plan was already reported \(failed\)/) });
    const figures = await agora(['outcome', 'calibration', '--read-key', rootKeyFile, '--min-position', position]);
    expect(figures).toMatchObject({ code: 0, stdout: 'executed proposals 1: 0 worked, 1 failed, 0 not reported\nno reviews\n' });
    const json = await agora(['outcome', 'calibration', '--json', '--read-key', rootKeyFile, '--min-position', position]);
    expect(JSON.parse(json.stdout)).toEqual({ outcomes: { executed: 1, worked: 0, failed: 1 }, reviewers: [] });
  }, 120_000);

  it('--help of the built command, and of one of its commands, exits 0 with a usage line (every command: cli.unit.spec.ts)', async () => {
    for (const args of [['--help'], ['agents', 'register', '--help']]) {
      const result = await agora(args);
      expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: agora /) });
    }
  }, 120_000);

  it('says when the gateway cannot be reached, with exit 1', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    const port = await new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
    await new Promise((r) => server.close(r));
    const result = await agora(['agents', 'list', '--url', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^error unavailable: cannot reach the gateway at http://127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
  }, 120_000);
});
