/**
 * An A2A task outlives the gateway that opened it: its id names its skill and aggregate, so the
 * standalone process, stopped and started again on the same data directory, answers for it from
 * the log. The official @a2a-js/sdk client opens a vote a person must decide (and another on a
 * drafted command it then signs in the same task), the process restarts, and the same client reads the task, streams it and cancels it with its signed
 * cancellation (its history rebuilt from the log); another agent still gets "not found". A recovery's task, named after the recovery
 * its report opened, is read after the restart by the paused agent only. A push configuration set before the restart
 * is kept in the data directory: the cancellation after it reaches the webhook.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { Agora, signCommand } from '@agora/sdk';
import { startAgoraProcess, waitFor, type AgoraProcess } from '@agora/testing';
import { a2aClientOf } from './support/a2a-client.js';

describe('an A2A task across a restart of the gateway (e2e)', () => {
  let dir: string;
  let agora: AgoraProcess | undefined;
  let url: string;
  const keys: Record<string, KeyPair> = { envoy: generateKeyPair(), nova: generateKeyPair() };
  /** A webhook on 127.0.0.1 and the bodies it got. */
  let webhook: Server;
  const pushed: string[] = [];

  const start = async () => {
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { AGORA_DATA_DIR: join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: 'closed', AGORA_A2A_PUSH_ALLOW: '127.0.0.1' });
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
  };
  /** The A2A client of an agent, each request with a fresh read token of its own. */
  const a2aClient = (agentId: string, lifetimeSeconds?: number): Promise<Client> => a2aClientOf(url, agentId, keys[agentId]!.secretKey, lifetimeSeconds);
  const signed = (actor: string, type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor, payload, secretKey: keys[actor]!.secretKey });
  const message = (command: unknown): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'data', value: { command } }, mediaType: 'application/json', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] });

  beforeAll(async () => {
    webhook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        pushed.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(join(tmpdir(), 'agora-a2a-restart-'));
    await start();
    const root = await Agora.connect({ url, signer: { keyFile: join(dir, 'data', 'operator.key.json') } });
    try {
      for (const [agentId, pair] of Object.entries(keys)) {
        writeFileSync(join(dir, `${agentId}.key.json`), JSON.stringify({ agentId, ...pair }), { mode: 0o600 });
        await root.send('RegisterAgent', { agentId, publicKey: pair.publicKey, displayName: agentId, roles: ['executive'], constitutions: [], specializations: [], trustScore: 500 });
      }
    } finally {
      await root.close();
    }
  }, 120_000);

  afterAll(async () => {
    await agora?.stop();
    webhook?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('is read, streamed and cancelled after the restart, by its caller only', async () => {
    const opened = (await (await a2aClient('envoy')).sendMessage({ tenant: '', message: message(signed('envoy', 'CreateVotingSession', { requestId: 'restart-1', actionType: 'rotate_keys', riskLevel: 'high', decider: 'person' })), configuration: undefined, metadata: undefined })) as Task;
    expect({ id: opened.id, contextId: opened.contextId, state: opened.status?.state }).toEqual({ id: 'validator-vote:voting_session-restart-1', contextId: 'validator-vote:voting_session-restart-1', state: TaskState.TASK_STATE_INPUT_REQUIRED });
    // A task opened on a draft is named after the aggregate its drafted command names; signed and sent in it, it starts there.
    const first = await a2aClient('envoy');
    const drafted = (await first.sendMessage({ tenant: '', message: message({ type: 'CreateVotingSession', payload: { actionType: 'rotate_keys', riskLevel: 'high', summary: 'Rotate the keys', decider: 'person' } }), configuration: undefined, metadata: undefined })) as Task;
    const asked = (drafted.status?.message?.parts ?? []).find((p) => p.content?.$case === 'data')?.content?.value as { command: { commandId: string; issuedAt: string; payload: { requestId: string } } };
    expect({ id: drafted.id, state: drafted.status?.state }).toEqual({ id: `validator-vote:voting_session-${asked.command.payload.requestId}`, state: TaskState.TASK_STATE_INPUT_REQUIRED });
    const { commandId, issuedAt, payload } = asked.command;
    const started = (await first.sendMessage({ tenant: '', message: { ...message(signCommand({ type: 'CreateVotingSession', payload: payload as never, commandId, issuedAt, signer: { keyFile: join(dir, 'envoy.key.json') } })), taskId: drafted.id, contextId: drafted.contextId }, configuration: undefined, metadata: undefined })) as Task;
    expect({ id: started.id, agora: started.metadata?.['agora'] }).toEqual({ id: drafted.id, agora: expect.objectContaining({ streamId: `voting_session-${payload.requestId}` }) });
    // A recovery's task is named after the recovery its report opens (foreseen before it is sent).
    const recovery = (await (await a2aClient('nova')).sendMessage({ tenant: '', message: message(createSignedCommand({ type: 'ReportHealth', actor: 'nova', payload: { agentId: 'nova', health: 0.35, risk: 0.65, tags: ['cascade'], metrics: {} }, secretKey: keys['nova']!.secretKey })), configuration: undefined, metadata: undefined })) as Task;
    expect({ id: recovery.id, state: recovery.status?.state }).toEqual({ id: 'dialectic-recovery:dialectic_session-nova-p1', state: TaskState.TASK_STATE_INPUT_REQUIRED });
    // A push configuration, kept in the data directory.
    await first.createTaskPushNotificationConfig({ tenant: '', id: 'kept', taskId: opened.id, url: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/restart`, token: 'kept-token', authentication: undefined });

    await agora!.stop();
    await start();

    const client = await a2aClient('envoy');
    const read = await client.getTask({ tenant: '', id: opened.id, historyLength: 0 });
    expect({ id: read.id, contextId: read.contextId, state: read.status?.state, skill: (read.metadata?.['agora'] as { skill?: string }).skill }).toEqual({ id: opened.id, contextId: opened.contextId, state: TaskState.TASK_STATE_INPUT_REQUIRED, skill: 'validator-vote' });
    expect((await client.getTask({ tenant: '', id: drafted.id, historyLength: 0 })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // Its history is rebuilt too: the aggregate's events as the caller may read them, one message each.
    const events = ((await client.getTask({ tenant: '', id: opened.id, historyLength: 10 })).history ?? []).map((m) => (m.parts.find((p) => p.content?.$case === 'data')?.content?.value as { event: { id: string; type: string; streamId: string; data: { createdBy?: string } } }).event);
    expect(events[0]).toMatchObject({ type: 'VotingSessionCreated', streamId: 'voting_session-restart-1', data: { createdBy: 'envoy' } });
    const recovered = await (await a2aClient('nova')).getTask({ tenant: '', id: recovery.id, historyLength: 0 });
    expect({ state: recovered.status?.state, skill: (recovered.metadata?.['agora'] as { skill?: string }).skill }).toEqual({ state: TaskState.TASK_STATE_INPUT_REQUIRED, skill: 'dialectic-recovery' });
    await expect(client.getTask({ tenant: '', id: recovery.id, historyLength: 0 })).rejects.toThrow(/not found/i);
    // Another agent gets what it gets for any unknown id.
    const other = await a2aClient('nova');
    await expect(other.getTask({ tenant: '', id: opened.id, historyLength: 0 })).rejects.toThrow(/not found/i);
    await expect(other.getTask({ tenant: '', id: 'validator-vote:voting_session-nothing-here', historyLength: 0 })).rejects.toThrow(/not found/i);

    // A stream of it: the task, then its status as the restarted gateway follows it, until the token ends it.
    const streamed: { kind: string | undefined; id: string; state: TaskState | undefined }[] = [];
    for await (const update of (await a2aClient('envoy', 2)).resubscribeTask({ tenant: '', id: opened.id })) {
      const payload = update.payload;
      if (payload?.$case === 'task') streamed.push({ kind: 'task', id: payload.value.id, state: payload.value.status?.state });
      else if (payload?.$case === 'statusUpdate') streamed.push({ kind: 'statusUpdate', id: payload.value.taskId, state: payload.value.status?.state });
    }
    expect(streamed[0]).toEqual({ kind: 'task', id: opened.id, state: TaskState.TASK_STATE_INPUT_REQUIRED });
    expect(streamed.every((u) => u.id === opened.id && u.state === TaskState.TASK_STATE_INPUT_REQUIRED)).toBe(true);

    // The restarted gateway follows it: a cancel without the signed cancellation is refused as on the first, a signed one ends it.
    await expect(client.cancelTask({ tenant: '', id: opened.id, metadata: undefined })).rejects.toThrow(/signed CancelVotingSession/);
    await expect(other.cancelTask({ tenant: '', id: opened.id, metadata: { command: signed('nova', 'CancelVotingSession', { sessionId: 'restart-1', reason: 'not mine' }) } })).rejects.toThrow(/not found/i);
    const canceled = await client.cancelTask({ tenant: '', id: opened.id, metadata: { command: signed('envoy', 'CancelVotingSession', { sessionId: 'restart-1', reason: 'not needed after all' }) } });
    expect({ id: canceled.id, state: canceled.status?.state }).toEqual({ id: opened.id, state: TaskState.TASK_STATE_CANCELED });
    expect((await client.getTask({ tenant: '', id: opened.id, historyLength: 0 })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The push configuration set before the restart was still there: the cancellation reached its webhook.
    await waitFor(() => pushed.some((body) => body.includes(opened.id) && body.includes('TASK_STATE_CANCELED')), 'the cancellation pushed to the webhook', 20_000);
  }, 120_000);
});
