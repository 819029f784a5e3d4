/**
 * Agora as an A2A agent, spoken to by the official client of @a2a-js/sdk, against the standalone
 * process with reads closed: the client discovers the Agent Card, runs each skill to completion
 * (the tribunal's reviewers, the validators and the recovery's reviewer play their parts from SDK
 * role loops, the chamber's panel is stand-in servers speaking the providers' wire APIs), streams a
 * task's updates, gets push notifications at a local webhook, cancels a task with its signed
 * cancellation, and sees input-required until the operator decides, then completion. Every command
 * is the caller's, signed with its key; `agora audit` verifies the log at the end.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { panelScript } from '@agora/chamber';
import type { Role as AgoraRole } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, mintReadToken, type KeyPair } from '@agora/identity';
import { StandIns } from '@agora/providers';
import { Agora, onDialecticTurn, onReviewRequested, onVoteRequested, signCommand, type RoleLoop } from '@agora/sdk';
import { REPO_ROOT, docsExample, runToCompletion, startAgoraProcess, workspaceExample, type AgoraProcess } from '@agora/testing';
import { a2aClientOf } from './support/a2a-client.js';

const CAST: Record<string, { roles: AgoraRole[]; constitutions?: string[]; trustScore?: number; specializations?: string[] }> = {
  envoy: { roles: ['executive'] },
  nova: { roles: ['executive'], specializations: ['planning'] },
  harbinger: { roles: ['reviewer'], constitutions: ['risk'], trustScore: 700 },
  heretic: { roles: ['reviewer'], constitutions: ['premise'], trustScore: 680 },
  sentinel: { roles: ['reviewer'], constitutions: ['evidence'], trustScore: 650 },
  zealot: { roles: ['reviewer'], constitutions: ['execution'], trustScore: 620 },
  aegis: { roles: ['validator'], specializations: ['security'], trustScore: 900 },
  ledger: { roles: ['validator'], specializations: ['compliance'], trustScore: 820 },
  pilot: { roles: ['validator'], specializations: ['operations'], trustScore: 760 },
};
const threshold = (value: number) => ({ operation: 'set_risk_threshold' as const, parameters: { threshold: value } });
const cascade = { operation: 'enable_cascade_detection' as const, parameters: {} };

const STATE_NAMES: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
  [TaskState.TASK_STATE_FAILED]: 'failed',
};
const stateOf = (task: { status?: { state: TaskState } | undefined }) => STATE_NAMES[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? 'unknown';

const dataPart = (data: unknown): Part => ({ content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined });
const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined });
const textOf = (task: Task) => (task.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(' ');
const dataOf = (task: Task) => (task.artifacts[0]?.parts[0]?.content as { value: Record<string, unknown> } | undefined)?.value;

/** A task event as a stream or a webhook carries it: its kind, task and state. */
interface LifecycleEvent {
  kind: 'task' | 'statusUpdate' | 'artifactUpdate' | 'message';
  taskId: string;
  state: string | undefined;
}
const eventOf = (update: StreamResponse): LifecycleEvent => {
  const payload = update.payload!;
  if (payload.$case === 'task') return { kind: 'task', taskId: payload.value.id, state: stateOf(payload.value) };
  if (payload.$case === 'statusUpdate') return { kind: 'statusUpdate', taskId: payload.value.taskId, state: stateOf(payload.value) };
  if (payload.$case === 'artifactUpdate') return { kind: 'artifactUpdate', taskId: payload.value.taskId, state: undefined };
  return { kind: 'message', taskId: payload.value.taskId, state: undefined };
};
/** A push body of A2A 1.0 (a StreamResponse in JSON) as a task event. */
const pushedEventOf = (body: Record<string, { id?: string; taskId?: string; status?: { state: string } }>): LifecycleEvent => {
  const kind = (['task', 'statusUpdate', 'artifactUpdate', 'message'] as const).find((k) => body[k] !== undefined)!;
  const value = body[kind]!;
  const state = value.status?.state.replace(/^TASK_STATE_/, '').toLowerCase().replace('_', '-');
  return { kind, taskId: kind === 'task' ? value.id! : value.taskId!, state };
};
const TERMINAL = new Set(['completed', 'canceled', 'rejected', 'failed']);
/**
 * What is wrong with a task's events as A2A has them: the Task first, then updates of that task
 * only, never a bare message, nothing after a terminal state, and (a stream) nothing after
 * input-required either: a stream ends there. Pushes go on past input-required (`interrupted`).
 */
function checkLifecycle(events: LifecycleEvent[], options: { interrupted?: boolean } = {}): { problems: string[]; taskId: string; last: string | undefined } {
  const problems: string[] = [];
  const taskId = events[0]?.taskId ?? '';
  if (events[0]?.kind !== 'task') problems.push(`the first event is ${events[0]?.kind ?? 'missing'}, not the Task`);
  let last: string | undefined;
  /** The state the last status update announced: a stream ends on a terminal one or on input-required. */
  let announced: string | undefined;
  events.forEach((event, i) => {
    if (event.kind === 'message') problems.push(`event ${i} is a bare message`);
    if (event.taskId !== taskId) problems.push(`event ${i} is of task ${event.taskId}`);
    if (last !== undefined && TERMINAL.has(last)) problems.push(`event ${i} (${event.kind} ${event.state ?? ''}) comes after ${last}`);
    else if (!options.interrupted && announced === 'input-required') problems.push(`event ${i} (${event.kind} ${event.state ?? ''}) comes after input-required: the stream should have ended`);
    if (event.kind === 'task' && i > 0 && event.state === 'submitted') problems.push(`event ${i} goes back to submitted`);
    if (event.state !== undefined) last = event.state;
    if (event.kind === 'statusUpdate') announced = event.state;
  });
  if (last !== undefined && !TERMINAL.has(last) && last !== 'input-required') problems.push(`it ends ${last}: neither terminal nor input-required`);
  return { problems, taskId, last };
}

/** A webhook that keeps every push by task, with the token it came with. */
async function lifecycleHook() {
  const got: { token: string | undefined; event: LifecycleEvent }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      got.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, event: pushedEventOf(JSON.parse(body) as never) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hooks.push(server);
  const of = (taskId: string) => got.filter((g) => g.event.taskId === taskId);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/lifecycle`,
    tokens: (taskId: string) => [...new Set(of(taskId).map((g) => g.token))],
    async until(taskId: string, done: (events: LifecycleEvent[]) => boolean): Promise<LifecycleEvent[]> {
      const deadline = Date.now() + 20_000;
      while (!done(of(taskId).map((g) => g.event)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      return of(taskId).map((g) => g.event);
    },
  };
}
const hooks: Server[] = [];

describe('Agora as an A2A agent, driven by the official @a2a-js/sdk client (e2e)', () => {
  let dir: string;
  let agora: AgoraProcess;
  let url: string;
  let stands: StandIns;
  let root: Agora;
  const keys: Record<string, KeyPair> = {};
  const sdkClients: Agora[] = [];
  const loops: RoleLoop[] = [];
  /** Every state an A2A task went through, as the client saw it, by skill (the report quotes them). */
  const seen: Record<string, string[]> = {};
  let webhook: Server;
  let webhookUrl: string;
  const pushes: { authorization: string | undefined; body: Record<string, unknown> }[] = [];

  const keyFile = (agentId: string) => join(dir, `${agentId}.key.json`);
  /** The A2A client of an agent: the card and every request carry a fresh read token of its own (Authorization: Bearer). */
  const a2aClient = (agentId: string, lifetimeSeconds?: number): Promise<Client> => a2aClientOf(url, agentId, keys[agentId]!.secretKey, lifetimeSeconds);
  const signed = (actor: string, type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor, payload, secretKey: keys[actor]!.secretKey });
  const message = (command: unknown, extra: Partial<Message> = {}): Message => ({
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart('please'), dataPart({ command })],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  });
  const sendRequest = (msg: Message, configuration?: Record<string, unknown>) => ({ tenant: '', message: msg, configuration: configuration as never, metadata: undefined });
  /** Follows a task with tasks/resubscribe until it is final, noting every state. */
  const followToEnd = async (client: Client, taskId: string, states: string[]): Promise<Task> => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: 0 });
      if (states[states.length - 1] !== stateOf(task)) states.push(stateOf(task));
      if (['completed', 'canceled', 'rejected', 'failed'].includes(stateOf(task))) return task;
      try {
        for await (const update of client.resubscribeTask({ tenant: '', id: taskId })) note(update, states);
      } catch {
        // Final meanwhile: resubscribing to a final task is refused; getTask says how it ended.
      }
    }
    throw new Error(`task ${taskId} never became final: ${states.join(' > ')}`);
  };
  const note = (update: StreamResponse, states: string[]) => {
    const payload = update.payload;
    const state = payload?.$case === 'task' ? stateOf(payload.value) : payload?.$case === 'statusUpdate' ? stateOf(payload.value) : undefined;
    if (state !== undefined && states[states.length - 1] !== state) states.push(state);
  };

  /**
   * nova, a model-free client, plays its recovery in the task: each of its turns is a signed command
   * in a message of the same task, sent while the task is input-required on its turn.
   */
  const playRecovery = async (client: Client, nova: Agora, opened: Task, states: string[]) => {
    let task = opened;
    const sessionId = (task.metadata?.['agora'] as { streamId: string }).streamId.replace(/^dialectic_session-/, '');
    const turns: string[] = [];
    while (stateOf(task) === 'input-required' && turns.length < 6) {
      const session = await nova.query('GetDialecticSession', { sessionId });
      const command =
        session.status === 'awaiting_thesis'
          ? signed('nova', 'SubmitThesis', { sessionId, rootCause: 'An outside complexity spike', proposedConditions: [threshold(0.5), cascade], reasoning: 'External, not internal' })
          : session.status === 'synthesis'
            ? signed('nova', 'SubmitSynthesis', { sessionId, round: session.round + 1, rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade], reasoning: "I accept the reviewer's threshold", agrees: true })
            : session.status === 'awaiting_signatures' && session.proposed
              ? signed('nova', 'SignResolution', nova.signResolution(sessionId, session.proposed.payload as Parameters<Agora['signResolution']>[1]))
              : undefined;
      if (command === undefined) break;
      turns.push(command.type);
      states.push(`(${command.type})`);
      task = (await client.sendMessage(sendRequest(message(command, { taskId: task.id, contextId: task.contextId })))) as Task;
      if (states[states.length - 1] !== stateOf(task)) states.push(stateOf(task));
    }
    return { task, turns, sessionId };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-a2a-e2e-'));
    stands = await StandIns.start(panelScript({ blind: { openai: 'migrate online', anthropic: 'migrate online', google: 'migrate online' } }));
    // Rounds may be short, as docs/a2a.md starts Agora for its client (whose proposal asks for 5-second rounds).
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: 'closed', AGORA_TRIBUNAL_POLICY: JSON.stringify({ minRoundDeadlineMs: 1000 }), AGORA_A2A_PUSH_ALLOW: '127.0.0.1', ...stands.env });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    sdkClients.push(root);
    for (const [agentId, profile] of Object.entries(CAST)) {
      keys[agentId] = generateKeyPair();
      writeFileSync(keyFile(agentId), JSON.stringify({ agentId, ...keys[agentId] }), { mode: 0o600 });
      await root.send('RegisterAgent', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, constitutions: [], specializations: [], trustScore: 500, ...profile });
    }
    const overHttp = async (agentId: string) => {
      const client = await Agora.connect({ url, signer: { keyFile: keyFile(agentId) } });
      sdkClients.push(client);
      return client;
    };
    for (const reviewer of ['harbinger', 'heretic', 'sentinel', 'zealot']) loops.push(onReviewRequested(await overHttp(reviewer), async ({ constitution }) => ({ verdict: 'approve', reasoning: `${constitution}: nothing breaks it` })));
    for (const validator of ['aegis', 'ledger', 'pilot']) loops.push(onVoteRequested(await overHttp(validator), async ({ session }) => ({ decision: 'approve', reasoning: `${session.actionType} looks safe`, confidence: 0.85 })));
    // The recovery's reviewer, whoever is drawn (nova, the paused agent, takes its turns through A2A).
    for (const agentId of Object.keys(CAST).filter((a) => a !== 'nova')) {
      loops.push(
        onDialecticTurn(await overHttp(agentId), async (turn) => {
          if (turn.kind === 'antithesis') return { observedMetrics: { risk_score: 0.65 }, concerns: ['Watch for cascades'], reasoning: 'Keep the threshold tight', counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade] } };
          return { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade], reasoning: 'Agreed', agrees: true };
        }),
      );
    }
    await Promise.all(loops.map((l) => l.ready));
    webhook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        pushes.push({ authorization: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> });
        res.writeHead(pushes.length === 1 ? 503 : 200).end(); // the first delivery fails: it is retried
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/a2a-updates`;
  }, 120_000);

  afterAll(async () => {
    console.log(`A2A task states as the client saw them:\n${Object.entries(seen).map(([skill, states]) => `  ${skill}: ${states.join(' > ')}`).join('\n')}`);
    await Promise.all(loops.splice(0).map((l) => l.stop()));
    await Promise.all(sdkClients.map((c) => c.close()));
    await agora?.stop();
    await stands?.close();
    webhook?.close();
    for (const hook of hooks) hook.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('discovers the Agent Card: four skills with examples, the read token as its security scheme, streaming and push, A2A 1.0 and 0.3', async () => {
    const client = await a2aClient('envoy');
    const card = await client.getAgentCard();
    expect(card.skills.map((s) => s.id)).toEqual(['tribunal-review', 'validator-vote', 'chamber-consultation', 'dialectic-recovery']);
    for (const skill of card.skills) expect(JSON.parse(skill.examples[0]!)).toEqual({ command: { type: expect.any(String), payload: expect.any(Object) } });
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.securitySchemes['agoraReadToken']?.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer' } });
    expect(card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`)).toEqual([`JSONRPC 1.0 ${url}/a2a`, `JSONRPC 0.3 ${url}/a2a`]);
    // A 0.3 client (no A2A-Version header) gets the card in 0.3's shape.
    const legacy = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as { protocolVersion: string; url: string; skills: unknown[] };
    expect(legacy).toMatchObject({ protocolVersion: '0.3', url: `${url}/a2a` });
    // Without a read token the JSON-RPC endpoint answers 401 and says how to authenticate.
    const anonymous = await fetch(`${url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer realm="agora"/);
  });

  it('streams a tribunal review: working while the reviewers act, completed with the verdict as the artifact', async () => {
    const client = await a2aClient('envoy');
    const states: string[] = (seen['tribunal-review'] = []);
    let task: Task | undefined;
    for await (const update of client.sendMessageStream(sendRequest(message(signed('envoy', 'SubmitProposal', { proposalId: 'a2a-onboarding', title: 'Onboarding', body: 'Add tutorial tooltips', problem: 'Users drop off' }))))) {
      note(update, states);
      if (update.payload?.$case === 'task') task = update.payload.value;
    }
    const final = await client.getTask({ tenant: '', id: task!.id, historyLength: 0 });
    expect(stateOf(final)).toBe('completed');
    expect(states.slice(0, 2)).toEqual(['submitted', 'working']);
    expect(states[states.length - 1]).toBe('completed');
    expect(dataOf(final)).toMatchObject({ proposalId: 'a2a-onboarding', proposer: 'envoy', status: 'approved' });
    expect((dataOf(final)!['rounds'] as { reviews: unknown[] }[])[0]!.reviews).toHaveLength(4);
    // The command in the log is envoy's, under its own signature.
    const events = await root.query('GetProposal', { proposalId: 'a2a-onboarding' });
    expect(events.proposer).toBe('envoy');
  }, 60_000);

  it('runs a vote with a push notification config: the webhook gets every update with its bearer credentials, a failed delivery retried', async () => {
    const client = await a2aClient('envoy');
    const states: string[] = (seen['validator-vote'] = []);
    const result = await client.sendMessage(sendRequest(message(signed('envoy', 'CreateVotingSession', { requestId: 'a2a-deploy', actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out 4.2' })), { acceptedOutputModes: [], historyLength: undefined, returnImmediately: false, taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: webhookUrl, token: '', authentication: { scheme: 'Bearer', credentials: 'webhook-secret' } } }));
    const task = result as Task;
    states.push(stateOf(task));
    const final = await followToEnd(client, task.id, states);
    expect(stateOf(final)).toBe('completed');
    expect(dataOf(final)).toMatchObject({ sessionId: 'a2a-deploy', requestingAgent: 'envoy', finalDecision: 'approve' });
    // Pushes are sent beside the task, never in its way: wait for the final one.
    const deadline = Date.now() + 15_000;
    while (!pushes.some((p) => JSON.stringify(p.body).includes('TASK_STATE_COMPLETED')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(pushes.length).toBeGreaterThanOrEqual(3);
    // The first delivery was answered 503 and sent again, before any later update (one webhook's updates go in order).
    expect(pushes[1]!.body).toEqual(pushes[0]!.body);
    expect(pushes.some((p) => JSON.stringify(p.body).includes('TASK_STATE_WORKING'))).toBe(true);
    expect(new Set(pushes.map((p) => p.authorization))).toEqual(new Set(['Bearer webhook-secret']));
    expect(pushes.some((p) => JSON.stringify(p.body).includes('TASK_STATE_COMPLETED'))).toBe(true);
    seen['validator-vote, at the webhook'] = pushes.map((p) => /TASK_STATE_([A-Z_]+)/.exec(JSON.stringify(p.body))?.[1]?.toLowerCase().replace('_', '-') ?? 'artifact');
  }, 60_000);

  it('consults the chamber: input-required until the operator approves, then working and completed with the synthesis', async () => {
    const client = await a2aClient('envoy');
    const states: string[] = (seen['chamber-consultation'] = []);
    const result = (await client.sendMessage(sendRequest(message(signed('envoy', 'ProposeChamberSession', { sessionId: 'a2a-consult', question: 'Migrate the orders table online or in a maintenance window?', rationale: 'A wrong call loses orders' }))))) as Task;
    states.push(stateOf(result));
    expect(stateOf(result)).toBe('input-required');
    await root.send('ApproveChamberSession', { sessionId: 'a2a-consult' });
    const final = await followToEnd(client, result.id, states);
    expect(stateOf(final)).toBe('completed');
    expect(dataOf(final)).toMatchObject({ summary: { sessionId: 'a2a-consult', status: 'consensus', outcome: 'consensus' } });
  }, 60_000);

  it('cancels a task with its signed cancellation; without one the cancel is refused and the task goes on; its stream ends with the token', async () => {
    const client = await a2aClient('envoy');
    const states: string[] = (seen['validator-vote (person, cancelled)'] = []);
    const task = (await client.sendMessage(sendRequest(message(signed('envoy', 'CreateVotingSession', { requestId: 'a2a-cancel', actionType: 'rotate_keys', riskLevel: 'high', decider: 'person' }))))) as Task;
    states.push(stateOf(task));
    expect(stateOf(task)).toBe('input-required');
    await expect(client.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(/signed CancelVotingSession/);
    // A stream of the task ends when the read token it was opened with expires (the task goes on).
    const opened = Date.now();
    const whileOpen: string[] = [];
    for await (const update of (await a2aClient('envoy', 2)).resubscribeTask({ tenant: '', id: task.id })) note(update, whileOpen);
    const endedAfterMs = Date.now() - opened;
    expect(whileOpen).toEqual(['input-required']);
    // The token is good until its exp, a whole second 1 to 2 s ahead: the stream ended then, not before.
    expect(endedAfterMs).toBeGreaterThanOrEqual(900);
    expect(endedAfterMs).toBeLessThan(10_000);
    // A task is its caller's: another agent neither reads nor cancels it.
    const other = await a2aClient('nova');
    await expect(other.getTask({ tenant: '', id: task.id, historyLength: 0 })).rejects.toThrow(/not found/i);
    await expect(other.cancelTask({ tenant: '', id: task.id, metadata: { command: signed('nova', 'CancelVotingSession', { sessionId: 'a2a-cancel', reason: 'not mine' }) } })).rejects.toThrow(/not found/i);
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: { command: signed('envoy', 'CancelVotingSession', { sessionId: 'a2a-cancel', reason: 'not needed after all' }) } });
    states.push(stateOf(canceled));
    expect(stateOf(canceled)).toBe('canceled');
    expect(await root.query('GetVotingSession', { sessionId: 'a2a-cancel' })).toMatchObject({ status: 'cancelled', cancellation: { cancelledBy: 'envoy' } });
  }, 60_000);

  it("requests a dialectic recovery: input-required on the caller's turns, which it sends as messages of the task, completed with the resolution", async () => {
    const client = await a2aClient('nova');
    const nova = await Agora.connect({ url, signer: { keyFile: keyFile('nova') } });
    sdkClients.push(nova);
    const states: string[] = (seen['dialectic-recovery'] = []);
    let task = (await client.sendMessage(sendRequest(message(signed('nova', 'ReportHealth', { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { risk_score: 0.65 } }))))) as Task;
    states.push(stateOf(task));
    const { task: played, turns, sessionId } = await playRecovery(client, nova, task, states);
    // Named after the recovery the report opened, as the other skills' tasks are after their aggregates (any gateway rebuilds it).
    expect({ id: task.id, sessionId }).toEqual({ id: `dialectic-recovery:dialectic_session-${sessionId}`, sessionId: expect.stringMatching(/^nova-p\d+$/) });
    task = played;
    const final = await followToEnd(client, task.id, states);
    expect({ state: stateOf(final), text: textOf(final), turns }).toMatchObject({ state: 'completed', text: expect.stringMatching(/^Resolved/), turns: expect.arrayContaining(['SubmitThesis', 'SignResolution']) });
    expect(dataOf(final)).toMatchObject({ agentId: 'nova', status: 'resolved' });
    // Each turn's request returned when the task next waited for nova, or ended: never with a state the turn had already changed.
    expect(states).toEqual(['input-required', '(SubmitThesis)', 'input-required', '(SubmitSynthesis)', 'input-required', '(SignResolution)', 'completed']);
    // A final task takes no more messages (the SDK's request handler refuses them).
    const late = await client.sendMessage(sendRequest(message(signed('nova', 'SubmitThesis', { sessionId, rootCause: 'x', proposedConditions: [cascade], reasoning: 'x' }), { taskId: task.id, contextId: task.contextId }))).catch((error: Error) => error);
    expect(String((late as Error).message)).toMatch(/terminal state/);
  }, 60_000);

  it('answers an A2A 0.3 client (JSON-RPC without A2A-Version) in 0.3: message/send, then tasks/get', async () => {
    const rpc = async (method: string, params: unknown) => {
      const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${mintReadToken({ agentId: 'envoy', secretKey: keys['envoy']!.secretKey })}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      return (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
    };
    const command = signed('envoy', 'CreateVotingSession', { requestId: 'a2a-legacy', actionType: 'deploy_staging', riskLevel: 'high' });
    const sent = await rpc('message/send', { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data: { command } }] } });
    expect(sent.result).toMatchObject({ kind: 'task', status: { state: 'completed' }, artifacts: [{ parts: [{ kind: 'data', data: { sessionId: 'a2a-legacy', finalDecision: 'approve' } }] }] });
    const got = await rpc('tasks/get', { id: sent.result!['id'] });
    expect(got.result).toMatchObject({ kind: 'task', id: sent.result!['id'], status: { state: 'completed' } });
    // The card's example as it is, from a 0.3 client: a task waiting for its signature, the draft in a data part of 0.3.
    const example = JSON.stringify({ command: { type: 'CreateVotingSession', payload: { actionType: 'deploy_staging', riskLevel: 'high', summary: 'Roll out 4.3' } } });
    const drafted = await rpc('message/send', { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: example }] } });
    expect(drafted.result).toMatchObject({ kind: 'task', status: { state: 'input-required', message: { parts: [{ kind: 'text' }, { kind: 'data', data: { command: { type: 'CreateVotingSession', actor: 'envoy' }, signing: { version: 'agora.command.v1' } } }] } } });
  }, 60_000);

  it("refuses a command that is not the caller's own, and a report that trips no breaker, each with Agora's reason", async () => {
    const client = await a2aClient('envoy');
    const forged = (await client.sendMessage(sendRequest(message(signed('nova', 'SubmitProposal', { proposalId: 'a2a-not-mine', title: 'x', body: 'x', problem: 'x' }))))) as Task;
    expect(stateOf(forged)).toBe('rejected');
    expect(textOf(forged)).toMatch(/^Agora refused SubmitProposal: forbidden: the command's actor "nova" is not the caller envoy/);
    const calm = (await client.sendMessage(sendRequest(message(signed('envoy', 'ReportHealth', { agentId: 'envoy', health: 0.9, risk: 0.1 }))))) as Task;
    expect(stateOf(calm)).toBe('rejected');
    expect(textOf(calm)).toMatch(/tripped no circuit breaker/);
    await expect(root.query('GetProposal', { proposalId: 'a2a-not-mine' })).rejects.toMatchObject({ code: 'not_found' });
  }, 60_000);

  it("runs docs/a2a.md's client example to the tribunal's verdict", async () => {
    const example = docsExample('a2a.md', 'A client');
    const file = join(REPO_ROOT, '.cache', `a2a-example-${process.pid}.ts`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, workspaceExample(example));
    try {
      const run = await runToCompletion(file, [], { AGORA_URL: url, AGORA_KEY_FILE: keyFile('envoy') }, 60_000);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^TASK_STATE_COMPLETED The tribunal's verdict: approved$/m);
    } finally {
      rmSync(file, { force: true });
    }
  }, 60_000);

  it("a generic client drives each skill's card example as it is: a Task, streamed and pushed, in input-required with the drafted command; signed and sent in the same task, it goes on to its end", async () => {
    // The generic client: the official client only, told nothing of Agora but the card.
    const generic = await a2aClient('envoy');
    const card = await generic.getAgentCard();
    const extension = card.capabilities?.extensions.find((e) => e.uri === 'urn:agora:a2a:signed-command:v1');
    expect(extension).toMatchObject({ required: false, description: expect.stringMatching(/signed by the caller/) });
    const hook = await lifecycleHook();
    const asText = (text: string, extra: Partial<Message> = {}): Message => ({ ...message(undefined, extra), parts: [textPart(text)] });
    for (const skill of card.skills) {
      // The recovery is asked for by the agent at risk itself: nova (its earlier recovery resolved, the report trips its breaker again).
      const who = skill.id === 'dialectic-recovery' ? 'nova' : 'envoy';
      const client = who === 'envoy' ? generic : await a2aClient(who);
      const states: string[] = (seen[`${skill.id} (the card's example, then signed)`] = []);
      const opened: StreamResponse[] = [];
      for await (const update of client.sendMessageStream(sendRequest(asText(skill.examples[0]!), { acceptedOutputModes: [], historyLength: undefined, returnImmediately: false, taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: hook.url, token: `token-${skill.id}`, authentication: undefined } }))) {
        opened.push(update);
        note(update, states);
      }
      const lifecycle = checkLifecycle(opened.map(eventOf));
      expect({ skill: skill.id, problems: lifecycle.problems, last: lifecycle.last }).toEqual({ skill: skill.id, problems: [], last: 'input-required' });
      const taskId = lifecycle.taskId;
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(stateOf(task)).toBe('input-required');
      const asked = (task.status?.message?.parts ?? []).find((p) => p.content?.$case === 'data')?.content?.value as { command: { type: string; actor: string; commandId: string; issuedAt: string; payload: Record<string, unknown> }; signing: { version: string } };
      expect(asked).toMatchObject({ command: { actor: who, commandId: expect.any(String), issuedAt: expect.any(String), payload: expect.any(Object) }, signing: { version: 'agora.command.v1' } });
      expect(textOf(task)).toMatch(/^Sign to start: sign this /);
      // A resubscription to it gives the Task and ends (it waits for the caller).
      const again: StreamResponse[] = [];
      for await (const update of client.resubscribeTask({ tenant: '', id: taskId })) again.push(update);
      expect(again.map((u) => u.payload?.$case)).toEqual(['task']);

      // The signing client: signs the drafted envelope as it is (the SDK's signCommand) and sends it in the same task.
      const { type, payload, commandId, issuedAt } = asked.command;
      const command = signCommand({ type: type as 'SubmitProposal', payload: payload as never, commandId, issuedAt, signer: { keyFile: keyFile(who) } });
      const streamed: StreamResponse[] = [];
      for await (const update of client.sendMessageStream(sendRequest(message(command, { taskId, contextId: task.contextId })))) {
        streamed.push(update);
        note(update, states);
      }
      const going = checkLifecycle(streamed.map(eventOf));
      expect({ skill: skill.id, problems: going.problems, taskId: going.taskId }).toEqual({ skill: skill.id, problems: [], taskId });
      expect(['completed', 'input-required']).toContain(going.last);
      let current = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      if (skill.id === 'chamber-consultation') {
        expect(stateOf(current)).toBe('input-required');
        await root.send('ApproveChamberSession', { sessionId: String(payload['sessionId']) });
      }
      if (skill.id === 'dialectic-recovery') {
        const nova = await Agora.connect({ url, signer: { keyFile: keyFile('nova') } });
        sdkClients.push(nova);
        current = (await playRecovery(client, nova, current, states)).task;
      }
      const final = await followToEnd(client, taskId, states);
      expect({ skill: skill.id, state: stateOf(final) }).toEqual({ skill: skill.id, state: 'completed' });
      // The webhook got the task's whole lifecycle, in order: the Task first, its end last.
      const pushed = await hook.until(taskId, (events) => ['completed', 'failed', 'canceled', 'rejected'].includes(events[events.length - 1]?.state ?? ''));
      expect({ skill: skill.id, ...checkLifecycle(pushed, { interrupted: true }) }).toEqual({ skill: skill.id, problems: [], taskId, last: 'completed' });
      expect(pushed.map((e) => e.state)).toEqual(expect.arrayContaining(['submitted', 'input-required', 'working', 'completed']));
      expect(hook.tokens(taskId)).toEqual([`token-${skill.id}`]);
    }

    // Such a task is cancelled by tasks/cancel alone (nothing was sent to Agora), and the webhook hears it.
    const example = card.skills.find((s) => s.id === 'validator-vote')!.examples[0]!;
    const waiting = (await generic.sendMessage(sendRequest(asText(example), { acceptedOutputModes: [], historyLength: undefined, returnImmediately: false, taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: hook.url, token: 'token-cancel', authentication: undefined } }))) as Task;
    expect(stateOf(waiting)).toBe('input-required');
    expect(stateOf(await generic.cancelTask({ tenant: '', id: waiting.id, metadata: undefined }))).toBe('canceled');
    const pushed = await hook.until(waiting.id, (events) => events.some((e) => e.state === 'canceled'));
    expect({ ...checkLifecycle(pushed, { interrupted: true }), states: pushed.map((e) => e.state) }).toEqual({ problems: [], taskId: waiting.id, last: 'canceled', states: ['submitted', 'input-required', 'canceled'] });
    // A message whose fields make no command is a task too, in input-required with the reason.
    const vague = (await generic.sendMessage(sendRequest(asText('Please review my plan')))) as Task;
    expect({ state: stateOf(vague), text: textOf(vague) }).toEqual({ state: 'input-required', text: expect.stringMatching(/^The message names no skill/) });
  }, 180_000);

  it('leaves a log that agora audit verifies', async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop()));
    await agora.stop();
    const audit = await runToCompletion('apps/cli/src/main.ts', ['audit', '--workers', '0'], { AGORA_DATA_DIR: join(dir, 'data'), AGORA_OPERATOR_KEY_FILE: join(dir, 'data', 'operator.key.json') }, 120_000);
    expect({ code: audit.code, findings: audit.stdout.split('\n').filter((l) => /@\d+ \(position/.test(l)) }).toEqual({ code: 0, findings: [] });
  }, 150_000);
});
