/**
 * An A2A task and its push configurations are shared by the gateway's replicas and outlive them:
 * two gateway processes over one NATS (a server of the test's own, the log in JetStream), the
 * registry and voting services as processes beside them. The official @a2a-js/sdk client opens a
 * vote a person must decide on the first gateway; the second reads it, streams it, takes a push
 * configuration for it that both list, and cancels it with its signed cancellation, which the
 * webhook hears once though both gateways follow the task. A second vote's configuration, set on one gateway, is still listed after both
 * restart, and its cancellation on a restarted gateway is pushed to the webhook.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createSignedCommand } from '@agora/identity';
import { startAgoraProcess, startServiceFleet, waitFor, type AgoraProcess, type ServiceFleet } from '@agora/testing';
import { a2aClientOf } from './support/a2a-client.js';

describe('A2A tasks and push configurations across two gateway replicas and their restart (e2e)', () => {
  let fleet: ServiceFleet;
  let webhook: Server;
  let webhookUrl: string;
  /** Every push the webhook got: its task, its state (or `artifact`) and its token. */
  const pushes: { taskId: string; state: string; token: string | undefined }[] = [];
  const gateways: Record<'one' | 'two', { process: AgoraProcess | undefined; url: string }> = { one: { process: undefined, url: '' }, two: { process: undefined, url: '' } };

  /** Starts a gateway process (again), its A2A webhooks allowed on 127.0.0.1; one relay is enough. */
  const startGateway = async (name: 'one' | 'two') => {
    const started = await startAgoraProcess('apps/gateway/src/main.ts', 'agora-gateway', { ...fleet.env(`gateway-${name}`), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', AGORA_READS: 'closed', AGORA_A2A_PUSH_ALLOW: '127.0.0.1', ...(name === 'two' ? { AGORA_RELAY: 'off' } : {}) });
    gateways[name] = { process: started, url: /listening on (http:\/\/[^\s]+) /.exec(started.output())![1]! };
  };
  const a2aClient = (name: 'one' | 'two', lifetimeSeconds?: number): Promise<Client> => a2aClientOf(gateways[name].url, 'envoy', fleet.key('envoy').secretKey, lifetimeSeconds);
  const signed = (type: string, payload: Record<string, unknown>) => createSignedCommand({ type, actor: 'envoy', payload, secretKey: fleet.key('envoy').secretKey });
  const message = (command: unknown): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'data', value: { command } }, mediaType: 'application/json', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] });
  const openVote = async (client: Client, requestId: string) =>
    (await client.sendMessage({ tenant: '', message: message(signed('CreateVotingSession', { requestId, actionType: 'rotate_keys', riskLevel: 'high', decider: 'person' })), configuration: undefined, metadata: undefined })) as Task;
  const pushConfig = (taskId: string, token: string) => ({ tenant: '', id: token, taskId, url: webhookUrl, token, authentication: undefined });
  const listed = async (client: Client, taskId: string) => (await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs.map((c) => c.id);
  const pushedUntil = async (taskId: string, state: string) => {
    const deadline = Date.now() + 20_000;
    while (!pushes.some((p) => p.taskId === taskId && p.state === state) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return pushes.filter((p) => p.taskId === taskId);
  };

  beforeAll(async () => {
    webhook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const taskId = /"taskId":"([^"]+)"/.exec(body)?.[1] ?? /"id":"([^"]+)"/.exec(body)?.[1] ?? '';
        const state = /TASK_STATE_([A-Z_]+)/.exec(body)?.[1]?.toLowerCase() ?? 'artifact';
        pushes.push({ taskId, state, token: req.headers['x-a2a-notification-token'] as string | undefined });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/a2a-replicas`;
    fleet = await startServiceFleet({ label: 'a2a-replicas' });
    await fleet.start('registry');
    await fleet.start('voting');
    await fleet.register({ envoy: { roles: ['executive'] } });
    await Promise.all([startGateway('one'), startGateway('two')]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(Object.values(gateways).map((g) => g.process?.stop()));
    await fleet?.stop();
    webhook?.close();
  }, 60_000);

  it('a task opened on one gateway is read, streamed, given a push configuration and cancelled on the other', async () => {
    const opened = await openVote(await a2aClient('one'), 'replicas-1');
    expect({ id: opened.id, state: opened.status?.state }).toEqual({ id: 'validator-vote:voting_session-replicas-1', state: TaskState.TASK_STATE_INPUT_REQUIRED });

    const two = await a2aClient('two');
    const read = await two.getTask({ tenant: '', id: opened.id, historyLength: 0 });
    expect({ id: read.id, state: read.status?.state }).toEqual({ id: opened.id, state: TaskState.TASK_STATE_INPUT_REQUIRED });

    // A stream of it on the second gateway: the Task first, as it stands, until the token ends the stream.
    const streamed: { kind: string; state: TaskState | undefined }[] = [];
    for await (const update of (await a2aClient('two', 2)).resubscribeTask({ tenant: '', id: opened.id })) {
      if (update.payload?.$case === 'task') streamed.push({ kind: 'task', state: update.payload.value.status?.state });
      else if (update.payload?.$case === 'statusUpdate') streamed.push({ kind: 'statusUpdate', state: update.payload.value.status?.state });
    }
    expect(streamed[0]).toEqual({ kind: 'task', state: TaskState.TASK_STATE_INPUT_REQUIRED });

    // A push configuration set on the second gateway is listed on both.
    await two.createTaskPushNotificationConfig(pushConfig(opened.id, 'first'));
    expect(await listed(two, opened.id)).toEqual(['first']);
    expect(await listed(await a2aClient('one'), opened.id)).toEqual(['first']);

    const canceled = await two.cancelTask({ tenant: '', id: opened.id, metadata: { command: signed('CancelVotingSession', { sessionId: 'replicas-1', reason: 'not needed after all' }) } });
    expect({ id: canceled.id, state: canceled.status?.state }).toEqual({ id: opened.id, state: TaskState.TASK_STATE_CANCELED });
    // The first gateway's follower sees the cancellation on the log too.
    const one = await a2aClient('one');
    await waitFor(async () => (await one.getTask({ tenant: '', id: opened.id, historyLength: 0 })).status?.state === TaskState.TASK_STATE_CANCELED, 'the first gateway to see the task cancelled', 20_000);
    await pushedUntil(opened.id, 'canceled');
    // Both gateways follow the task (the first opened it, the second adopted it): each update is pushed once.
    await new Promise((r) => setTimeout(r, 1_500));
    const got = pushes.filter((p) => p.taskId === opened.id);
    expect(got.map((p) => p.state)).toEqual(['artifact', 'canceled']);
    expect(new Set(got.map((p) => p.token))).toEqual(new Set(['first']));
  }, 120_000);

  it('a push configuration outlives both gateways: listed after their restart, and the cancellation is pushed', async () => {
    const opened = await openVote(await a2aClient('two'), 'replicas-2');
    await (await a2aClient('one')).createTaskPushNotificationConfig(pushConfig(opened.id, 'second'));

    await Promise.all(Object.values(gateways).map((g) => g.process?.stop()));
    await Promise.all([startGateway('one'), startGateway('two')]);

    const two = await a2aClient('two');
    expect(await listed(two, opened.id)).toEqual(['second']);
    expect(await listed(await a2aClient('one'), opened.id)).toEqual(['second']);
    const canceled = await two.cancelTask({ tenant: '', id: opened.id, metadata: { command: signed('CancelVotingSession', { sessionId: 'replicas-2', reason: 'not needed after all' }) } });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const got = await pushedUntil(opened.id, 'canceled');
    expect(got.map((p) => p.state)).toContain('canceled');
    expect(new Set(got.map((p) => p.token))).toEqual(new Set(['second']));
  }, 120_000);
});
