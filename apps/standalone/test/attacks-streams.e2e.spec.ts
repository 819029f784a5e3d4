/**
 * Attacks on what readers keep open, and on the gateway's tables, against a running Agora (the
 * standalone process, reads closed, small bounds set by its environment), spoken to as a user
 * would: HTTP, SSE, and MCP with the official MCP SDK client.
 *
 * - a stream ends with its credential: a 2 s token's SSE stream ends at expiry with `event: end`
 *   and nothing after it; a disabled reader's ends; a role change ends it and the reconnection
 *   sees what the new roles give; a reconnection with a fresh token and Last-Event-ID loses nothing;
 * - bounded sessions: past the MCP caps the answer is a clear error, the heap stays bounded, and
 *   the sessions opened before still work; a flood of logins and challenges from another address
 *   ends neither alice's console session nor her challenge.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGNING_TAGS, type Role } from '@agora/contracts';
import { domainSigningBytes, generateKeyPair, mintReadToken, signBytes, type KeyPair } from '@agora/identity';
import { Agora, SseParser } from '@agora/sdk';
import { processEnvironment, sourceArgs, startAgoraProcess, waitFor, type AgoraProcess } from '@agora/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const FLEET: Record<string, Role[]> = { alice: ['executive'], bob: ['executive'], carol: ['executive'], eve: ['observer'], ada: ['auditor'], mal: ['executive'], ticker: ['executive'] };
/** The bounds the process runs with: small, so that the test passes them quickly. */
const BOUNDS = {
  AGORA_MCP_SESSIONS_PER_READER: '3',
  AGORA_MCP_SESSIONS_MAX: '6',
  AGORA_CONSOLE_SESSIONS_PER_AGENT: '3',
  AGORA_LOGIN_CHALLENGES_PER_SOURCE: '4',
  AGORA_LOGIN_CHALLENGES_MAX: '10',
};

let dir: string;
let agora: AgoraProcess;
let url: string;
let root: Agora;
const keys: Record<string, KeyPair> = {};
const token = (agentId: string, lifetimeSeconds = 120) => mintReadToken({ agentId, secretKey: keys[agentId]!.secretKey, lifetimeSeconds });

interface Frame {
  event: string | undefined;
  id: string | undefined;
  data: Record<string, unknown>;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * An SSE stream of the gateway read frame by frame: `frames` as they arrive, `closed` once the
 * server has ended the response. Aborted by `stop()`.
 */
function openStream(path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const frames: Frame[] = [];
  let status = 0;
  const closed = (async () => {
    const res = await fetch(`${url}${path}`, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
    status = res.status;
    if (res.status !== 200) return `HTTP ${res.status} ${await res.text()}`;
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'closed';
      for (const { event, id, data } of parser.feed(value)) frames.push({ event, id, data: JSON.parse(data) as Record<string, unknown>, at: Date.now() });
    }
  })().catch((error: Error) => (controller.signal.aborted ? 'aborted' : `failed: ${error.message}`));
  return { frames, closed, status: () => status, stop: () => controller.abort() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An HTTP request from a given local address (127.0.0.x: another source, as the gateway sees it). */
function from(localAddress: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: { ok: boolean; result?: Record<string, unknown>; error?: { code: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${url}${path}`, { method, localAddress, headers: { ...(text === undefined ? {} : { 'content-type': 'application/json' }), ...headers } }, (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (out += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(out) as never }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const loginAnswer = (agentId: string, challenge: string) => ({ agentId, challenge, signature: signBytes(domainSigningBytes(SIGNING_TAGS.login, { aud: 'agora', challenge, sub: agentId }), keys[agentId]!.secretKey) });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-attacks-streams-'));
  agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: 'closed', ...BOUNDS });
  url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
  root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
  for (const [agentId, roles] of Object.entries(FLEET)) {
    keys[agentId] = generateKeyPair();
    await root.send('RegisterAgent', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles });
  }
}, 120_000);

afterAll(async () => {
  await root?.close();
  await agora?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('a stream ends with its credential (e2e)', () => {
  it("a 2 s token's stream ends at its expiry with event: end, and nothing after it; a fresh token and Last-Event-ID resume it without loss", async () => {
    const short = token('alice', 2);
    const exp = (JSON.parse(Buffer.from(short.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000;
    const first = openStream('/v1/events?from=end&category=agent', { authorization: `Bearer ${short}` });
    await waitFor(() => first.status() === 200, 'the stream to open', 10_000);
    // The operator changes an agent every 250 ms, before, across and well after the token's expiry.
    const names: string[] = [];
    const ticking = (async () => {
      for (let i = 0; Date.now() < exp + 2_500; i++) {
        names.push(`tick-${i}`);
        await root.send('UpdateAgent', { agentId: 'ticker', displayName: `tick-${i}` });
        await sleep(250);
      }
    })();
    expect(await first.closed).toBe('closed');
    await ticking;
    const last = first.frames.at(-1)!;
    expect(last.event).toBe('end');
    expect(last.data).toMatchObject({ reason: 'token_expired' });
    expect(last.at).toBeGreaterThanOrEqual(exp);
    const before = first.frames.slice(0, -1);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((f) => f.event === 'AgentUpdated' && f.at <= last.at)).toBe(true);
    // Only one end, and it is the last frame: the connection closed with it.
    expect(first.frames.filter((f) => f.event === 'end')).toHaveLength(1);

    // A fresh token resumes after the last id received: every update, each once, in order.
    const lastId = before.at(-1)!.id!;
    const second = openStream('/v1/events?category=agent', { authorization: `Bearer ${token('alice')}`, 'last-event-id': lastId });
    await waitFor(() => second.frames.filter((f) => f.event === 'AgentUpdated').length >= names.length - before.length, 'the rest of the updates', 15_000);
    second.stop();
    const seen = [...before, ...second.frames].filter((f) => f.event === 'AgentUpdated').map((f) => (f.data['data'] as { displayName: string }).displayName);
    expect(seen).toEqual(names);
  }, 60_000);

  it("a disabled reader's stream ends (reader_disabled) and it cannot open another", async () => {
    const stream = openStream('/v1/events?from=end', { authorization: `Bearer ${token('mal')}` });
    await waitFor(() => stream.status() === 200, 'the stream to open', 10_000);
    await root.send('DisableAgent', { agentId: 'mal', reason: 'compromised' });
    expect(await stream.closed).toBe('closed');
    expect(stream.frames.at(-1)).toMatchObject({ event: 'end', data: { reason: 'reader_disabled' } });
    const again = openStream('/v1/events?from=end', { authorization: `Bearer ${token('mal')}` });
    expect(await again.closed).toMatch(/^HTTP 403 .*actor_disabled/);
  }, 30_000);

  it('a role change ends the stream (roles_changed); the reconnection sees what the new roles give', async () => {
    await root.send('RegisterAgent', { agentId: 'ada2', publicKey: (keys['ada2'] = generateKeyPair()).publicKey, displayName: 'ada2', roles: ['auditor'] });
    const bob = await Agora.connect({ url, signer: { agentId: 'bob', secretKey: keys['bob']!.secretKey } });
    try {
      const stream = openStream('/v1/events?from=end&category=proposal', { authorization: `Bearer ${token('ada2')}` });
      await waitFor(() => stream.status() === 200, 'the stream to open', 10_000);
      await bob.send('SubmitProposal', { proposalId: 'p-before', title: 'Before', body: 'A body an auditor reads', problem: 'Seen whole' });
      await waitFor(() => stream.frames.some((f) => f.event === 'ProposalSubmitted'), 'the auditor to see the proposal', 10_000);
      expect(stream.frames.find((f) => f.event === 'ProposalSubmitted')!.data['data']).toMatchObject({ body: 'A body an auditor reads' });
      // Demoted to observer: the stream ends, and what it reads from then on is decided on the new role.
      await root.send('UpdateAgent', { agentId: 'ada2', roles: ['observer'] });
      expect(await stream.closed).toBe('closed');
      expect(stream.frames.at(-1)).toMatchObject({ event: 'end', data: { reason: 'roles_changed' } });
      const lastId = stream.frames.filter((f) => f.id !== undefined).at(-1)!.id!;
      await bob.send('SubmitProposal', { proposalId: 'p-after', title: 'After', body: 'A body an observer does not read', problem: 'Metadata only' });
      const again = openStream('/v1/events?category=proposal', { authorization: `Bearer ${token('ada2')}`, 'last-event-id': lastId });
      await waitFor(() => again.frames.some((f) => f.event === 'ProposalSubmitted'), 'the observer to see the new proposal', 10_000);
      again.stop();
      const after = again.frames.find((f) => f.event === 'ProposalSubmitted')!;
      expect(after.data['streamId']).toBe('proposal-p-after');
      expect(after.data['data']).toBeUndefined();
      expect(JSON.stringify(again.frames)).not.toContain('does not read');
    } finally {
      await bob.close();
    }
  }, 60_000);

  it("the SDK's event stream takes up a stream the gateway ended (roles_changed) at once with a fresh token, and loses nothing", async () => {
    await root.send('RegisterAgent', { agentId: 'ivy', publicKey: (keys['ivy'] = generateKeyPair()).publicKey, displayName: 'ivy', roles: ['auditor'] });
    const ivy = await Agora.connect({ url, signer: { agentId: 'ivy', secretKey: keys['ivy']!.secretKey } });
    const controller = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of ivy.events({ categories: ['agent'], from: 'end', signal: controller.signal })) {
        if (event.streamId === 'agent-ticker') seen.push((event.data as { displayName?: string }).displayName ?? '');
      }
    })();
    // Streams of /v1/events the gateway has finished: ivy's first one is among them once it has been ended.
    const finished = async () => Number(/^agora_gateway_http_requests_total\{route="\/v1\/events",method="GET",status="200"\} (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
    try {
      await sleep(500);
      const before = await finished();
      const names: string[] = [];
      for (let i = 0; i < 12; i++) {
        names.push(`sdk-${i}`);
        await root.send('UpdateAgent', { agentId: 'ticker', displayName: `sdk-${i}` });
        // Half way, ivy's roles change: the gateway ends her stream, and the SDK reads on.
        if (i === 5) await root.send('UpdateAgent', { agentId: 'ivy', roles: ['operator'] });
      }
      await waitFor(() => seen.length >= names.length, 'every update through the SDK', 15_000);
      expect(seen).toEqual(names);
      expect(await finished()).toBeGreaterThan(before);
    } finally {
      controller.abort();
      await reading.catch(() => undefined);
      await ivy.close();
    }
  }, 60_000);

  it('`agora events tail` takes up a stream the gateway ended (roles_changed), prints no end as an event, and loses nothing', async () => {
    keys['ike'] = generateKeyPair();
    await root.send('RegisterAgent', { agentId: 'ike', publicKey: keys['ike'].publicKey, displayName: 'ike', roles: ['auditor'] });
    const keyFile = join(dir, 'ike.key.json');
    await writeFile(keyFile, JSON.stringify({ agentId: 'ike', ...keys['ike'] }), { mode: 0o600 });
    const child = spawn(process.execPath, [...sourceArgs('apps/cli/src/main.ts'), 'events', 'tail', '--from-end', '--category', 'agent', '--type', 'AgentUpdated', '--first', '8', '--json'], { env: processEnvironment({ AGORA_URL: url, AGORA_KEY_FILE: keyFile }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      // Updates until the tail prints one (it is connected), then four more each side of ike's role change.
      const names: string[] = [];
      for (let i = 0; !stdout.includes('"cli-'); i++) {
        if (i === 50 || child.exitCode !== null) throw new Error(`the tail printed nothing: ${stderr}`);
        names.push(`cli-${i}`);
        await root.send('UpdateAgent', { agentId: 'ticker', displayName: `cli-${i}` });
        await sleep(200);
      }
      const update = async (name: string) => {
        names.push(name);
        await root.send('UpdateAgent', { agentId: 'ticker', displayName: name });
      };
      await update('before-1');
      await update('before-2');
      await root.send('UpdateAgent', { agentId: 'ike', roles: ['operator'] });
      await waitFor(() => stderr.includes('the gateway ended the event stream (roles_changed)'), 'the tail to be told', 15_000);
      for (let i = 0; i < 8; i++) await update(`after-${i}`);
      expect(await exited).toBe(0);
      const printed = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { streamId: string; data: { displayName?: string } })
        .filter((e) => e.streamId === 'agent-ticker')
        .map((e) => e.data.displayName);
      // The first updates before it connected are not its (from the end); from its first line on, every update once and in order.
      expect(printed).toEqual(names.slice(names.indexOf(printed[0]!), names.indexOf(printed[0]!) + printed.length));
      expect(printed).toContain('before-2');
      expect(printed.some((name) => name?.startsWith('after-'))).toBe(true);
    } finally {
      child.kill();
    }
  }, 90_000);

  it("a console session's stream ends with event: end (session_ended) on logout", async () => {
    const { json: challenge } = await from('127.0.0.1', 'POST', '/v1/login/challenge');
    const login = await from('127.0.0.1', 'POST', '/v1/login', loginAnswer('carol', challenge.result!['challenge'] as string));
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const stream = openStream('/v1/events?from=end', { cookie });
    await waitFor(() => stream.status() === 200, 'the stream to open', 10_000);
    expect((await from('127.0.0.1', 'POST', '/v1/logout', undefined, { cookie })).status).toBe(200);
    expect(await stream.closed).toBe('closed');
    expect(stream.frames.at(-1)).toMatchObject({ event: 'end', data: { reason: 'session_ended' } });
  }, 30_000);
});

describe('bounded sessions (e2e)', () => {
  /** The MCP SDK's client on /mcp as `agentId`, every request with a fresh read token. */
  const mcpClient = (agentId: string, lifetimeSeconds = 120) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${token(agentId, lifetimeSeconds)}`);
        return fetch(input, { ...init, headers });
      },
    });
    return { client: new Client({ name: `${agentId}-model`, version: '1.0.0' }), transport };
  };
  const initialize = (agentId: string) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token(agentId)}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } }),
    });
  const heapUsed = async () => Number(/^nodejs_heap_size_used_bytes (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())![1]);
  const opened: Client[] = [];

  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  });

  it('MCP: past the sessions of one reader and of all, initialize is refused with a clear error, the heap stays bounded, and the sessions opened before still work', async () => {
    for (const agentId of ['alice', 'alice', 'alice', 'bob', 'bob', 'bob']) {
      const { client, transport } = mcpClient(agentId);
      await client.connect(transport);
      opened.push(client);
    }
    // A fourth of alice's: 429, her own cap, said in JSON-RPC with Agora's code.
    const fourth = await initialize('alice');
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/^too_many_sessions: alice holds 3 MCP sessions/), data: { code: 'too_many_sessions' } } });
    // carol has none, but all six are taken: 503 with Retry-After; the SDK's client says so too.
    const full = await initialize('carol');
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await full.json()).toMatchObject({ error: { message: expect.stringMatching(/^too_many_sessions: the gateway holds its most MCP sessions \(6/), data: { code: 'too_many_sessions' } } });
    const { client: refused, transport } = mcpClient('carol');
    await expect(refused.connect(transport)).rejects.toThrow(/too_many_sessions/);

    // A flood of initializes costs no memory that stays: 600 refused, against about 200 KB each for a session.
    const heapBefore = await heapUsed();
    for (let i = 0; i < 20; i++) {
      const answers = await Promise.all(Array.from({ length: 30 }, () => initialize(i % 2 ? 'alice' : 'carol').then(async (res) => (await res.text(), res.status))));
      expect(answers.every((status) => status === 429 || status === 503)).toBe(true);
    }
    const grown = (await heapUsed()) - heapBefore;
    expect(grown).toBeLessThan(40 * 1024 * 1024);

    // Every session opened before the flood still answers.
    for (const client of opened) {
      const result = (await client.callTool({ name: 'list_agents', arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
    }
    // Ending one (DELETE) makes room for another of the same reader.
    await (opened[0]!.transport as StreamableHTTPClientTransport).terminateSession();
    await opened.shift()!.close();
    const { client: again, transport: againTransport } = mcpClient('alice');
    await again.connect(againTransport);
    opened.push(again);
    expect(((await again.callTool({ name: 'list_agents', arguments: {} })) as CallToolResult).isError).toBeFalsy();
  }, 120_000);

  it("MCP: a session's notification stream ends with its token (a last log message, token_expired) and is taken up again with a fresh one; a disabled reader's session closes", async () => {
    // Free the places the last test took.
    await Promise.all(opened.splice(0).map(async (c) => {
      await (c.transport as StreamableHTTPClientTransport).terminateSession().catch(() => undefined);
      await c.close();
    }));
    const { client, transport } = mcpClient('carol', 2);
    const ends: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void ends.push(notification.params.data));
    await client.connect(transport);
    opened.push(client);
    await waitFor(() => ends.length >= 1, 'the end of the notification stream at the token expiry', 15_000);
    expect(ends[0]).toEqual({ event: 'end', reason: 'token_expired' });
    // The session goes on: a request with a fresh token is answered.
    expect(((await client.callTool({ name: 'list_agents', arguments: {} })) as CallToolResult).isError).toBeFalsy();

    const { client: doomed, transport: doomedTransport } = mcpClient('eve');
    const said: unknown[] = [];
    doomed.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void said.push(notification.params.data));
    await doomed.connect(doomedTransport);
    await root.send('DisableAgent', { agentId: 'eve', reason: 'left' });
    await waitFor(() => said.some((d) => (d as { reason?: string }).reason === 'reader_disabled'), 'the disabled reader to be told', 15_000);
    await expect(doomed.callTool({ name: 'list_agents', arguments: {} })).rejects.toThrow();
    await doomed.close().catch(() => undefined);
  }, 60_000);

  it("a flood of logins and challenges from another address ends neither alice's console session nor her challenge", async () => {
    const mine = '127.0.0.1';
    // alice logs in, and asks for a challenge she answers only after the flood.
    const first = await from(mine, 'POST', '/v1/login/challenge');
    const login = await from(mine, 'POST', '/v1/login', loginAnswer('alice', first.json.result!['challenge'] as string));
    expect(login.status).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const pending = (await from(mine, 'POST', '/v1/login/challenge')).json.result!['challenge'] as string;

    // From 127.0.0.2: 200 challenges (its own oldest go, at 4), and bob logs in 30 times (his own oldest sessions go, at 3).
    for (let i = 0; i < 200; i++) expect((await from('127.0.0.2', 'POST', '/v1/login/challenge')).status).toBe(200);
    const bobs: string[] = [];
    for (let i = 0; i < 30; i++) {
      const challenge = (await from('127.0.0.2', 'POST', '/v1/login/challenge')).json.result!['challenge'] as string;
      const reply = await from('127.0.0.2', 'POST', '/v1/login', loginAnswer('bob', challenge));
      expect(reply.status).toBe(200);
      bobs.push(String(reply.headers['set-cookie']).split(';')[0]!);
    }
    // bob keeps his last 3; his first ended.
    expect((await from('127.0.0.2', 'GET', '/v1/session', undefined, { cookie: bobs.at(-1)! })).status).toBe(200);
    expect((await from('127.0.0.2', 'GET', '/v1/session', undefined, { cookie: bobs[0]! })).json.error?.code).toBe('unauthenticated');
    // More addresses fill every place left: the next is refused, 429 with Retry-After; none is taken from another address.
    const refusals: { status: number; retryAfter: unknown; code: string | undefined }[] = [];
    for (const address of ['127.0.0.3', '127.0.0.4', '127.0.0.5']) {
      for (let i = 0; i < 4; i++) {
        const reply = await from(address, 'POST', '/v1/login/challenge');
        if (reply.status !== 200) refusals.push({ status: reply.status, retryAfter: reply.headers['retry-after'], code: reply.json.error?.code });
      }
    }
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toEqual({ status: 429, retryAfter: expect.stringMatching(/^\d+$/), code: 'too_many_sessions' });

    // alice's session still reads, and her challenge still logs her in.
    expect((await from(mine, 'GET', '/v1/session', undefined, { cookie })).json).toMatchObject({ ok: true, result: { agentId: 'alice' } });
    expect((await from(mine, 'POST', '/v1/login', loginAnswer('alice', pending))).status).toBe(200);
  }, 60_000);
});
