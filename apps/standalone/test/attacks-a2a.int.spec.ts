/**
 * Attacks on the gateway's A2A agent and on its console and metrics routes, by a low-privilege
 * identity, against Agora's services in the test's own process as standalone mode composes them,
 * with the gateway on a real HTTP port, reads closed, small A2A bounds, and webhooks on local HTTP
 * servers (one of them listed as an operator lists a development host):
 *
 * - a push URL on a port of the system itself, the cloud metadata address, `file:` or `ftp:` is
 *   refused, and nothing reaches them;
 * - after DisableAgent or RotateAgentKey no update, and no outcome, reaches the caller's webhook;
 * - the same signed command sent many times joins one task; one caller takes only its share of the
 *   tasks followed; its garbage evicts only its own ended tasks; a task's history stays bounded;
 * - a reference id with newlines forges no log line; a deeply nested request gets a JSON-RPC error
 *   of its own;
 * - a stream is refused to a read token already past its expiry; a page of another origin cannot
 *   log the operator out; /metrics names no reviewer or validator without the scrape token.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetVotingSession, SIGNING_TAGS } from '@agora/contracts';
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, domainSigningBytes, generateKeyPair, mintReadToken, signBytes, type KeyPair } from '@agora/identity';
import { startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, runEventRelay, startAll, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, QUIET_PROJECTIONS, quietServices, startServicesInProcess, waitFor, type InProcessServices } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';

const FLEET = Object.fromEntries([...['alice', 'bob', 'mal', 'carl', 'dave'].map((id) => [id, { roles: ['executive'] }]), ...['val1', 'val2', 'val3'].map((id) => [id, { roles: ['validator'] }])]) as Record<string, { roles: string[] }>;
const BOUNDS = { maxTasks: 12, tasksPerCaller: 3, maxFinishedTasks: 20, finishedTasksPerCaller: 5, pushConfigsPerTask: 2, pushConfigsPerCaller: 4, historyMessages: 10, historyBytes: 64 * 1024 };
const METRICS_TOKEN = 'scrape-token-of-the-test-0123456789';

let services: InProcessServices<ServiceContext>;
let gateway: Gateway;
let url: string;
const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));
const servers: Server[] = [];
/** What the listed webhook received: the Authorization it came with and the body. */
const pushes: { authorization: string | undefined; body: string; at: number }[] = [];
let hookUrl: string;
/** A server standing for a port of the system itself (metrics, NATS monitoring): it must never be reached. */
let internalHits = 0;
let internalUrl: string;

const token = (agentId: string, options: { lifetimeSeconds?: number; now?: Date } = {}) => mintReadToken({ agentId, secretKey: keys[agentId]!.secretKey, ...options });
const signed = (actor: string, type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor, payload, secretKey: keys[actor]!.secretKey });
const vote = (actor: string, requestId: string) => signed(actor, 'CreateVotingSession', { requestId, actionType: 'rotate_keys', riskLevel: 'high', decider: 'person' });

interface RpcAnswer {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

/** A JSON-RPC request of A2A 1.0 to /a2a as `agentId` (a fresh read token unless one is given), or a raw body. */
async function rpc(agentId: string, method: string, params: unknown, options: { token?: string; raw?: string } = {}): Promise<RpcAnswer> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${options.token ?? token(agentId)}` },
    body: options.raw ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : { error: { code: 0, message: text } }) as RpcAnswer['body'] };
}

/** A user message of A2A 1.0's JSON carrying a command (or text), in a task when `taskId` is given. */
const message = (parts: unknown[], extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra });
const sendCommand = (agentId: string, command: unknown, extra: Record<string, unknown> = {}, configuration?: Record<string, unknown>) =>
  rpc(agentId, 'SendMessage', { message: message([{ data: { command } }], extra), ...(configuration ? { configuration } : {}) });

interface TaskJson {
  id: string;
  contextId: string;
  status: { state: string; message?: { parts: { text?: string }[] } };
  history?: unknown[];
}
const taskOf = (answer: RpcAnswer): TaskJson => {
  const result = answer.body.result as { task?: TaskJson } | undefined;
  if (result?.task === undefined) throw new Error(`no task in ${JSON.stringify(answer.body).slice(0, 500)}`);
  return result.task;
};
const textOf = (task: TaskJson) => (task.status.message?.parts ?? []).map((p) => p.text ?? '').join(' ');
const getTask = async (agentId: string, id: string) => (await rpc(agentId, 'GetTask', { id })).body.result as unknown as TaskJson | undefined;

async function listen(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => answer(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  hookUrl = `${await listen((req, res, body) => {
    pushes.push({ authorization: req.headers.authorization, body, at: Date.now() });
    res.writeHead(200).end();
  })}/hook`;
  internalUrl = `${await listen((_req, res) => {
    internalHits++;
    res.writeHead(200).end('ok');
  })}/metrics`;
  const start = (context: ServiceContext) =>
    startAll([
      ...quietServices(context, [startRegistryService, startProposalService, startTribunalService, startVotingService]),
      () => startProjectionsService(context, QUIET_PROJECTIONS),
      () => runEventRelay(context),
      async () => {
        gateway = await startGateway({
          client: context.client,
          store: context.store,
          port: 0,
          host: '127.0.0.1',
          logger: false,
          console: false,
          registry: context.metrics.registry,
          reads: { mode: 'closed', directory: context.directory },
          a2a: { ...BOUNDS, pushAllowHosts: [new URL(hookUrl).host] },
          metricsToken: METRICS_TOKEN,
        });
        url = gateway.url;
        return { close: () => gateway.close() };
      },
    ]);
  services = await startServicesInProcess({ label: 'attacks-a2a', keys, open: (dir, operator) => openServiceContext(embeddedAgora(dir, operator)), start });
  await services.register(FLEET, { trustScore: 700 });
}, 60_000);

afterAll(async () => {
  await services?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
}, 30_000);

describe('A2A push notifications (attacks)', () => {
  it('refuses a push URL on a port of the system itself, the metadata address, file: and ftp:, and nothing reaches them', async () => {
    const task = taskOf(await sendCommand('alice', vote('alice', 'ssrf-1')));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const metricsPort = new URL(url).port;
    for (const target of [internalUrl, `http://127.0.0.1:${metricsPort}/metrics`, `https://127.0.0.1:${metricsPort}/metrics`, 'http://169.254.169.254/latest/meta-data/iam', 'https://169.254.169.254/latest/meta-data/iam', 'file:///etc/passwd', 'ftp://127.0.0.1/x', 'https://localhost:4222/']) {
      const answer = await rpc('alice', 'CreateTaskPushNotificationConfig', { taskId: task.id, url: target, authentication: { scheme: 'Bearer', credentials: 'chosen-by-the-attacker' } });
      expect({ target, message: answer.body.error?.message }).toEqual({ target, message: expect.stringMatching(/^forbidden: /) });
    }
    // Nor through message/send's configuration: the message is refused before any task starts.
    const viaSend = await sendCommand('alice', vote('alice', 'ssrf-2'), {}, { taskPushNotificationConfig: { url: internalUrl } });
    expect(viaSend.body.error?.message).toMatch(/^forbidden: a push URL is https/);
    expect((await rpc('alice', 'ListTaskPushNotificationConfigs', { taskId: task.id })).body.result?.['configs'] ?? []).toEqual([]);
    // The listed development host is accepted.
    expect((await rpc('alice', 'CreateTaskPushNotificationConfig', { taskId: task.id, url: hookUrl })).body.error).toBeUndefined();
    await new Promise((r) => setTimeout(r, 300));
    expect(internalHits).toBe(0);
  });

  it('bounds the push configurations of a task and of a caller', async () => {
    const first = taskOf(await sendCommand('alice', vote('alice', 'configs-1')));
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) answers.push((await rpc('alice', 'CreateTaskPushNotificationConfig', { taskId: first.id, id: `c${i}`, url: `${hookUrl}?${i}` })).body.error?.message);
    expect(answers.filter((a) => a === undefined)).toHaveLength(BOUNDS.pushConfigsPerTask);
    expect(answers[BOUNDS.pushConfigsPerTask]).toMatch(/^too_many_sessions: task .* has 2 push configurations, the most a task may have/);
  });

  it.each([
    ['RotateAgentKey', 'carl'],
    ['DisableAgent', 'dave'],
  ])("after %s no update and no outcome reach the caller's webhook", async (command, agentId) => {
    const requestId = `revoked-${agentId}`;
    const task = taskOf(await sendCommand(agentId, vote(agentId, requestId), {}, { taskPushNotificationConfig: { url: hookUrl, authentication: { scheme: 'Bearer', credentials: `${agentId}-hook` } } }));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const mine = () => pushes.filter((p) => p.authorization === `Bearer ${agentId}-hook`);
    await waitFor(() => mine().some((p) => p.body.includes('TASK_STATE_INPUT_REQUIRED')), `${agentId}'s first pushes`, 10_000);
    const newKey = generateKeyPair();
    await services.ok('root', command, command === 'RotateAgentKey' ? { agentId, publicKey: newKey.publicKey } : { agentId, reason: 'compromised' });
    await waitFor(async () => (await services.context.directory.get(agentId))?.[command === 'RotateAgentKey' ? 'publicKey' : 'status'] === (command === 'RotateAgentKey' ? newKey.publicKey : 'disabled'), 'the directory to see the change', 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const before = mine().length;
    // The operator decides: the outcome (the session's votes and reasons) must not reach the webhook any more.
    await services.ok('root', 'DecideVotingEscalation', { sessionId: requestId, decision: 'approve', reason: 'decided by a person' });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(mine().slice(before).map((p) => /TASK_STATE_[A-Z_]+|artifact/.exec(p.body)?.[0])).toEqual([]);
    expect(mine().some((p) => p.body.includes('TASK_STATE_COMPLETED') || p.body.includes('finalDecision'))).toBe(false);
  });
});

describe('A2A tasks (attacks)', () => {
  it('the same signed command sent many times joins one task; one caller takes only its share of the tasks; the others still start theirs', async () => {
    const command = vote('mal', 'dup-1');
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendCommand('mal', command)));
    const ids = new Set(answers.map((a) => taskOf(a).id));
    expect(ids.size).toBe(1);
    // mal's share is 3 tasks: two more start, the fourth is refused.
    expect(taskOf(await sendCommand('mal', vote('mal', 'dup-2'))).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(taskOf(await sendCommand('mal', vote('mal', 'dup-3'))).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const fourth = taskOf(await sendCommand('mal', vote('mal', 'dup-4')));
    expect({ state: fourth.status.state, text: textOf(fourth) }).toEqual({ state: 'TASK_STATE_REJECTED', text: expect.stringMatching(/too_many_sessions: this caller follows 3 A2A tasks already/) });
    // Nothing was written for the refused one.
    await expect(services.query(GetVotingSession.subject, { sessionId: 'dup-4' }, { as: 'root' })).rejects.toThrow(/not_found voting session dup-4 does not exist/);
    expect(taskOf(await sendCommand('bob', vote('bob', 'fair-1'))).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it("one caller's garbage evicts only its own ended tasks", async () => {
    // bob's task ends (refused: not his own command).
    const bobs = taskOf(await sendCommand('bob', vote('alice', 'not-bobs')));
    expect(bobs.status.state).toBe('TASK_STATE_REJECTED');
    for (let i = 0; i < BOUNDS.maxFinishedTasks + 5; i++) expect(taskOf(await sendCommand('mal', vote('alice', `garbage-${i}`))).status.state).toBe('TASK_STATE_REJECTED');
    expect((await getTask('bob', bobs.id))?.id).toBe(bobs.id);
  });

  it("one caller's unsigned messages are tasks waiting for a signature, kept within its own share: another's waiting task stays", async () => {
    const bobs = taskOf(await rpc('bob', 'SendMessage', { message: message([{ text: JSON.stringify({ command: { type: 'CreateVotingSession', payload: { actionType: 'rotate_keys', riskLevel: 'high' } } }) }]) }));
    expect({ state: bobs.status.state, text: textOf(bobs) }).toEqual({ state: 'TASK_STATE_INPUT_REQUIRED', text: expect.stringMatching(/^Sign to start: sign this CreateVotingSession as bob/) });
    const first = taskOf(await rpc('mal', 'SendMessage', { message: message([{ text: 'garbage-first' }]) }));
    for (let i = 0; i < BOUNDS.maxFinishedTasks + 5; i++) expect(taskOf(await rpc('mal', 'SendMessage', { message: message([{ text: `garbage-${i}` }]) })).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // mal's oldest went (its own share), bob's is still there.
    expect(await getTask('mal', first.id)).toBeUndefined();
    expect((await getTask('bob', bobs.id))?.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it("a task's history stays bounded in messages and bytes", async () => {
    const task = taskOf(await sendCommand('bob', vote('bob', 'history-1')));
    const filler = 'x'.repeat(40 * 1024);
    for (let i = 0; i < 30; i++) await rpc('bob', 'SendMessage', { message: message([{ text: `${i} ${filler}` }], { taskId: task.id, contextId: task.contextId }) });
    const answer = await fetch(`${url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${token('bob')}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } }) });
    const text = await answer.text();
    expect(text.length).toBeLessThan(BOUNDS.historyBytes + 16 * 1024);
    const got = (JSON.parse(text) as { result: TaskJson }).result;
    expect(got.history!.length).toBeLessThanOrEqual(BOUNDS.historyMessages);
    expect(JSON.stringify(got.history)).toContain('29 xxx');
  });
});

describe('A2A requests (attacks)', () => {
  it('a reference id with newlines forges no log line, and a flood of them writes none', async () => {
    const written: string[] = [];
    // What the process writes to its console (the request handler logs a reference it does not find there).
    const levels = ['log', 'warn', 'error'] as const;
    const original = levels.map((level) => console[level]);
    for (const level of levels) console[level] = (...args: unknown[]) => void written.push(args.map(String).join(' '));
    try {
      const forged = 'x\nagora: operator "root" approved proposal p1';
      const answer = await rpc('alice', 'SendMessage', { message: message([{ text: 'hello' }], { referenceTaskIds: [forged] }) });
      expect(answer.body.error?.message).toMatch(/^invalid_command: referenceTaskIds are task ids/);
      const flood = await rpc('alice', 'SendMessage', { message: message([{ text: 'hello' }], { referenceTaskIds: Array.from({ length: 2_400 }, (_, i) => `ref-${i}-${'y'.repeat(30)}`) }) });
      expect(flood.body.error?.message).toMatch(/^invalid_command: a message refers to at most 16 tasks/);
      // The message's own ids are written in the request handler's lines too.
      const forgedId = await rpc('alice', 'SendMessage', { message: { ...message([{ text: 'hello' }]), messageId: forged } });
      expect(forgedId.body.error?.message).toMatch(/^invalid_command: messageId is an id/);
      expect(written.filter((line) => line.split('\n').some((l) => l.startsWith('agora: operator')))).toEqual([]);
      expect(written.length).toBeLessThan(5);
    } finally {
      levels.forEach((level, i) => (console[level] = original[i]!));
    }
  });

  it('a deeply nested request gets a JSON-RPC error of its own, not the stack overflow', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const raw = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"command":${deep}}}]}}}`;
    const answer = await rpc('alice', 'SendMessage', undefined, { raw });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/^invalid_command: the request nests deeper than \d+ levels/) });
    expect(JSON.stringify(answer.body)).not.toMatch(/call stack/i);
  });
});

describe('streams, console and metrics (attacks)', () => {
  it('a read token already past its exp (within the clock skew) opens no stream: SSE and A2A alike; a fresh one does', async () => {
    const stale = token('alice', { lifetimeSeconds: 10, now: new Date(Date.now() - 30_000) });
    const events = await fetch(`${url}/v1/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${stale}` } });
    expect(events.status).toBe(401);
    expect(await events.json()).toMatchObject({ ok: false, error: { code: 'token_expired' } });
    const task = taskOf(await sendCommand('alice', vote('alice', 'stale-stream')));
    const subscribe = await rpc('alice', 'SubscribeToTask', { id: task.id }, { token: stale });
    expect(subscribe.status).toBe(401);
    expect(subscribe.body.error?.message).toMatch(/^token_expired: /);
    const fresh = await fetch(`${url}/v1/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token('alice')}` } });
    expect(fresh.status).toBe(200);
    await fresh.body?.cancel();
  });

  it("a page of another origin (same site, another port) cannot end the operator's console session", async () => {
    const challenge = ((await (await fetch(`${url}/v1/login/challenge`, { method: 'POST' })).json()) as { result: { challenge: string } }).result.challenge;
    const signature = signBytes(domainSigningBytes(SIGNING_TAGS.login, { aud: 'agora', challenge, sub: 'root' }), keys['root']!.secretKey);
    const login = await fetch(`${url}/v1/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url }, body: JSON.stringify({ agentId: 'root', challenge, signature }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const other = `http://127.0.0.1:${Number(new URL(url).port) + 1}`;
    const logout = (headers: Record<string, string>) => fetch(`${url}/v1/logout`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: 'x=1' });
    const fromOtherPort = await logout({ origin: other, 'sec-fetch-site': 'same-site' });
    expect(fromOtherPort.status).toBe(403);
    expect(await fromOtherPort.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect((await logout({ origin: other })).status).toBe(403);
    expect((await logout({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await fetch(`${url}/v1/session`, { headers: { cookie } })).status).toBe(200);
    // From the console's own page it logs out.
    expect((await logout({ origin: url, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await fetch(`${url}/v1/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('/metrics names no reviewer or validator without the scrape token; with it, every metric', async () => {
    const open = await (await fetch(`${url}/metrics`)).text();
    expect(open).toMatch(/^agora_gateway_http_requests_total\{/m);
    expect(open).not.toMatch(/reviewer=|validator=|constitution=/);
    expect(open).not.toMatch(/^# HELP agora_tribunal_reviewer_verdicts/m);
    expect(await (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer wrong-token-of-the-right-length' } })).text()).not.toMatch(/^# HELP agora_tribunal_reviewer_verdicts/m);
    const whole = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(whole).toMatch(/^# HELP agora_tribunal_reviewer_verdicts/m);
    expect(whole).toMatch(/^# HELP agora_voting_validator_votes/m);
  });
});
