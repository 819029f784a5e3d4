// Any-language agents against a running Agora: standalone on free ports, its services over a NATS
// server of the test's own. A standard JSON Schema validator (ajv 2020) refuses the reviews the
// service refuses; then the Python and Go reference clients run their tests (the test vectors and a
// full tribunal round, the Go one over NATS). With CI=true a missing toolchain fails the test;
// otherwise that client is skipped with a message saying what to install.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createSignedCommand, envelopesFromMetadata, generateKeyPair, parseKeyFile, verifyCommandSignature } from '@agora/identity';
import { REPO_ROOT, startAgoraProcess, startNatsServer, waitFor, type AgoraProcess, type PrivateNatsServer } from '@agora/testing';
import { GENERATED_DIR } from '../src/generated.js';

const CI = process.env['CI'] === 'true';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function toolchain(command: string, args: string[], install: string): boolean {
  const found = spawnSync(command, args, { stdio: 'ignore' }).status === 0;
  if (!found && CI) throw new Error(`${command} is required in CI: ${install}`);
  if (!found) console.warn(`${command} is not installed: that reference client's tests are skipped (${install})`);
  return found;
}

/** The first Python 3 that has `cryptography` (Debian's is /usr/bin/python3, which another python3 on PATH may shadow). */
function python(): string | undefined {
  return [process.env['AGORA_PYTHON'], 'python3', '/usr/bin/python3'].find((p) => p !== undefined && spawnSync(p, ['-c', 'import cryptography'], { stdio: 'ignore' }).status === 0);
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('reference clients against a running Agora (e2e)', () => {
  let nats: PrivateNatsServer;
  let agora: AgoraProcess;
  let dir: string;
  let url: string;
  let operatorKeyFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-clients-e2e-'));
    nats = await startNatsServer();
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', {
      NATS_URL: nats.url,
      AGORA_DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
      AGORA_TRIBUNAL_POLICY: JSON.stringify({ minRoundDeadlineMs: 1_000 }),
    });
    url = /gateway listening on (http:\/\/\S+?)[\s(]/.exec(agora.output())![1]!.replace(/\/$/, '');
    operatorKeyFile = join(dir, 'operator.key.json');
  }, 120_000);

  afterAll(async () => {
    await agora?.stop();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  const post = async (body: unknown) => (await (await fetch(`${url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { ok: boolean; error?: { code: string } };
  const get = async <T>(path: string) => ((await (await fetch(`${url}${path}`)).json()) as { ok: true; result: T }).result;

  it('a standard JSON Schema validator refuses the reviews the service refuses, and accepts what it accepts', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(join(GENERATED_DIR, 'json-schema/commands/SubmitReview.json'), 'utf8')) as object);
    const operator = parseKeyFile(readFileSync(operatorKeyFile, 'utf8'));
    const executive = generateKeyPair();
    const reviewers = Object.fromEntries(['risk', 'premise', 'evidence', 'execution'].map((c) => [c, generateKeyPair()]));
    const sign = (type: string, actor: string, secretKey: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor, secretKey, payload });
    expect(await post(sign('RegisterAgent', 'root', operator.secretKey, { agentId: 'ts-exec', publicKey: executive.publicKey, displayName: 'exec', roles: ['executive'], trustScore: 500 }))).toMatchObject({ ok: true });
    for (const [c, key] of Object.entries(reviewers)) {
      expect(await post(sign('RegisterAgent', 'root', operator.secretKey, { agentId: `ts-${c}`, publicKey: key.publicKey, displayName: c, roles: ['reviewer'], constitutions: [c], trustScore: 500 }))).toMatchObject({ ok: true });
    }
    await waitFor(async () => (await get<{ agents: unknown[] }>('/v1/registry/agents?role=reviewer')).agents.length >= 4, 'the reviewers to be listed', 20_000);
    expect(await post(sign('SubmitProposal', 'ts-exec', executive.secretKey, { proposalId: 'ts-1', title: 'T', body: 'B', problem: 'P' }))).toMatchObject({ ok: true });
    await waitFor(async () => (await get<{ rounds: { status: string }[] }>('/v1/proposal/proposals/ts-1')).rounds.some((r) => r.status === 'open'), 'the round to open', 20_000);

    const base = { proposalId: 'ts-1', round: 1, constitution: 'risk', reasoning: 'because' };
    const invalid = [
      { ...base, verdict: 'object' },
      { ...base, verdict: 'object', constraint: 'c', scenario: 's' },
      { ...base, verdict: 'object', constraint: '   ', scenario: 's', suggestedRevision: 'r' },
      { ...base, verdict: 'object', scenario: 's', rejectReason: 'r' },
      { ...base, verdict: 'approve', scenario: 'an approval with an objection part' },
    ];
    for (const payload of invalid) {
      const envelope = sign('SubmitReview', 'ts-risk', reviewers['risk']!.secretKey, payload);
      expect([payload, validate(envelope)]).toEqual([payload, false]);
      expect([payload, await post(envelope)]).toEqual([payload, expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'invalid_command' }) })]);
    }
    const valid = sign('SubmitReview', 'ts-risk', reviewers['risk']!.secretKey, { ...base, verdict: 'object', constraint: 'c', scenario: 's', rejectReason: 'r' });
    expect(validate(valid)).toBe(true);
    expect(await post(valid)).toMatchObject({ ok: true });
  }, 90_000);

  it('the Python client passes the test vectors and a tribunal round', async () => {
    const interpreter = python();
    if (!toolchain(interpreter ?? 'python3', ['-c', 'import cryptography'], 'apt-get install python3 python3-cryptography')) return;
    const { code, output } = await run(interpreter!, ['-m', 'unittest', '-v'], join(REPO_ROOT, 'clients/python'), { AGORA_URL: url, AGORA_OPERATOR_KEY_FILE: operatorKeyFile });
    expect([code, output]).toEqual([0, expect.stringMatching(/Ran 10 tests[\s\S]*OK\s*$/)]);
    expect(output).not.toMatch(/skipped/);
    // The README's example: an agent registered, a proposal submitted.
    const example = await run(interpreter!, ['clients/python/example.py'], REPO_ROOT, { AGORA_URL: url, AGORA_OPERATOR_KEY_FILE: operatorKeyFile });
    expect([example.code, example.output]).toEqual([0, expect.stringContaining('events: ProposalSubmitted')]);
  }, 120_000);

  it('the Go client passes the test vectors and a tribunal round over NATS', async () => {
    if (!toolchain('go', ['version'], 'apt-get install golang-go golang-github-nats-io-go-nats-dev')) return;
    const { code, output } = await run('go', ['test', '-count=1', '-v', './...'], join(REPO_ROOT, 'clients/go'), {
      GO111MODULE: 'off',
      GOPATH: '/usr/share/gocode',
      GOFLAGS: '',
      AGORA_URL: url,
      AGORA_OPERATOR_KEY_FILE: operatorKeyFile,
      AGORA_NATS_URL: nats.url,
    });
    expect([code, output]).toEqual([0, expect.stringMatching(/--- PASS: TestTribunalRound/)]);
    expect(output).not.toMatch(/SKIP/);
    // The README's example: an agent registered over HTTP, a proposal submitted over NATS.
    const example = await run('go', ['run', './example'], join(REPO_ROOT, 'clients/go'), { GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '', AGORA_URL: url, AGORA_OPERATOR_KEY_FILE: operatorKeyFile, NATS_URL: nats.url });
    expect([example.code, example.output]).toEqual([0, expect.stringContaining('events: [ProposalSubmitted')]);
  }, 240_000);

  it('every event in the log fits its generated schema, metadata included, and every signed command re-verifies from its metadata as the specification says', async () => {
    const events = await readHistory(url);
    expect(events.length).toBeGreaterThan(20);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validators = new Map<string, ReturnType<Ajv2020['compile']>>();
    const keys = new Map<string, string>([['root', parseKeyFile(readFileSync(operatorKeyFile, 'utf8')).publicKey]]);
    // The services' own keys, as standalone created them under the data directory (service:<name>).
    const serviceKeysDir = join(dir, 'service-keys');
    for (const file of readdirSync(serviceKeysDir).filter((f) => f.endsWith('.key.json'))) {
      keys.set(`service:${file.slice(0, -'.key.json'.length)}`, parseKeyFile(readFileSync(join(serviceKeysDir, file), 'utf8')).publicKey);
    }
    const payloads = new Map<string, Record<string, unknown>>();
    let verified = 0;
    let byServices = 0;
    for (const event of events) {
      let validate = validators.get(event.type);
      if (!validate) validators.set(event.type, (validate = ajv.compile(JSON.parse(readFileSync(join(GENERATED_DIR, `json-schema/events/${event.type}.json`), 'utf8')) as object)));
      expect([event.type, validate(event), validate.errors ?? null]).toEqual([event.type, true, null]);
      const { metadata } = event;
      // The actor's key as the log had it when the command was signed (step 4); a service's own key for what it appends on its own behalf.
      if (typeof metadata['commandPayload'] === 'object') payloads.set(metadata['commandId'] as string, metadata['commandPayload'] as Record<string, unknown>);
      expect([event.type, typeof metadata['signature']]).toEqual([event.type, 'string']);
      const payload = payloads.get(metadata['commandId'] as string);
      expect(payload).toBeDefined();
      const key = keys.get(metadata['actor'] as string);
      expect([event.type, metadata['actor'], key !== undefined]).toEqual([event.type, metadata['actor'], true]);
      expect([event.type, envelopesFromMetadata(metadata, payload!).some((e) => verifyCommandSignature(e, key!))]).toEqual([event.type, true]);
      verified++;
      if (String(metadata['actor']).startsWith('service:')) byServices++;
      if (event.type === 'AgentRegistered' || event.type === 'AgentKeyRotated') keys.set(event.data['agentId'] as string, event.data['publicKey'] as string);
    }
    expect(verified).toBe(events.length);
    expect(byServices).toBeGreaterThan(0);
  }, 60_000);
});

type LoggedEvent = { type: string; data: Record<string, unknown>; metadata: Record<string, unknown> };

/** The log so far, from GET /v1/events (Server-Sent Events): read until a second passes with nothing new. */
async function readHistory(base: string): Promise<LoggedEvent[]> {
  const abort = new AbortController();
  const response = await fetch(`${base}/v1/events`, { signal: abort.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: LoggedEvent[] = [];
  let buffer = '';
  for (;;) {
    const next = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), 1_000))]);
    if (next === null || next.done) break;
    buffer += next.value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data: '));
      if (data) events.push(JSON.parse(data.slice('data: '.length)) as LoggedEvent);
    }
  }
  abort.abort();
  await reader.cancel().catch(() => undefined);
  return events;
}
