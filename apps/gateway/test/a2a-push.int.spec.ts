/**
 * A2A push notifications against real webhooks (local HTTP servers): every update POSTed with the
 * config's credentials, in order, a failed delivery retried with back-off and given up after its
 * attempts; a webhook that never answers holds nothing but its own bounded queue, whose oldest
 * waiting update is dropped and said in the log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { PushQueue } from '../src/a2a/push.js';

const update = (taskId: string, state: TaskState): StreamResponse => ({ payload: { $case: 'statusUpdate', value: { taskId, contextId: 'c', status: { state, message: undefined, timestamp: '2026-01-01T00:00:00.000Z' }, metadata: undefined } } });

async function webhook(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => answer(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

const until = async (what: string, check: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('A2A push notifications (int)', () => {
  const servers: Server[] = [];
  const queues: PushQueue[] = [];
  afterAll(() => {
    queues.forEach((q) => q.close());
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('POSTs every update in order with the Authorization of the config, retrying a failed delivery and giving up after its attempts', async () => {
    const received: { authorization: string | undefined; state: string }[] = [];
    let answers = 0;
    const hook = await webhook((req, res, body) => {
      answers++;
      // The first two deliveries fail (503, then a dropped connection): both are retried.
      if (answers === 1) return void res.writeHead(503).end();
      if (answers === 2) return void req.socket.destroy();
      received.push({ authorization: req.headers.authorization, state: /TASK_STATE_[A-Z_]+|"state":"[a-z-]+"/.exec(body)?.[0] ?? body });
      res.writeHead(200).end();
    });
    servers.push(hook.server);
    const warnings: string[] = [];
    const store = new InMemoryPushNotificationStore();
    const context = new ServerCallContext({ requestedVersion: '1.0' });
    await store.save('t1', context, { tenant: '', id: '', taskId: 't1', url: hook.url, token: '', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } });
    const push = new PushQueue(store, { initialDelayMs: 10, attempts: 3, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    await push.send(update('t1', TaskState.TASK_STATE_WORKING), context);
    await push.send(update('t1', TaskState.TASK_STATE_COMPLETED), context);
    await until('both updates delivered', () => received.length === 2);
    expect(received).toEqual([
      { authorization: 'Bearer hook-secret', state: 'TASK_STATE_WORKING' },
      { authorization: 'Bearer hook-secret', state: 'TASK_STATE_COMPLETED' },
    ]);
    expect(push.delivered).toBe(2);
    // A webhook registered over A2A 0.3 gets 0.3's body.
    const legacy = new ServerCallContext({ requestedVersion: '0.3' });
    await store.save('t0', legacy, { tenant: '', id: '', taskId: 't0', url: hook.url, token: '', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } });
    await push.send(update('t0', TaskState.TASK_STATE_COMPLETED), legacy);
    await until('the 0.3 update delivered', () => received.length === 3);
    expect(received[2]).toEqual({ authorization: 'Bearer hook-secret', state: '"state":"completed"' });

    // A webhook that always fails is given up after 3 attempts, and the log says so.
    let failures = 0;
    const broken = await webhook((_req, res) => {
      failures++;
      res.writeHead(500).end();
    });
    servers.push(broken.server);
    await store.save('t2', context, { tenant: '', id: '', taskId: 't2', url: broken.url, token: 'legacy-token', authentication: undefined });
    await push.send(update('t2', TaskState.TASK_STATE_WORKING), context);
    await until('the delivery given up', () => warnings.length === 1);
    expect(failures).toBe(3);
    expect(warnings[0]).toMatch(/^A2A push to .* for task t2 given up after 3 attempts: HTTP 500$/);
  });

  it('never waits on a webhook: send returns at once, and past the bound the oldest waiting update is dropped', async () => {
    const held: ServerResponse[] = [];
    const hook = await webhook((_req, res) => held.push(res));
    servers.push(hook.server);
    const warnings: string[] = [];
    const store = new InMemoryPushNotificationStore();
    const context = new ServerCallContext({ requestedVersion: '1.0' });
    await store.save('t3', context, { tenant: '', id: '', taskId: 't3', url: hook.url, token: '', authentication: undefined });
    const push = new PushQueue(store, { maxQueued: 2, timeoutMs: 60_000, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await push.send(update('t3', TaskState.TASK_STATE_WORKING), context);
    expect(Date.now() - started).toBeLessThan(1_000);
    // One delivery in flight (the webhook holds it), two waiting, two dropped.
    await until('the first delivery to reach the webhook', () => held.length === 1);
    expect(push.pending).toBe(3);
    expect(warnings).toEqual([expect.stringMatching(/^A2A push queue full: an update of task t3 to .* was dropped$/), expect.stringMatching(/was dropped$/)]);
    held.forEach((res) => res.writeHead(200).end());
  });
});
