/**
 * A2A push notifications against real webhooks (local HTTP servers, listed as the operator lists
 * development hosts): every update POSTed with the config's credentials, in order, a failed
 * delivery retried with back-off and given up after its attempts; a webhook that never answers
 * holds nothing but its caller's own bounded queue, whose oldest waiting update is dropped and said
 * in the log, and never delays or drops another caller's updates; a webhook is never reached on a
 * refused address, nor through a redirect.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { PushConfigs, PushQueue } from '../src/a2a/push.js';
import { PushTargets, refusedAddress } from '../src/a2a/push-target.js';

/** The webhooks of these tests are on 127.0.0.1, which an operator lists for development. */
const LOCAL = new PushTargets(['127.0.0.1']);
const caller = (userName: string) => new ServerCallContext({ requestedVersion: '1.0', user: { isAuthenticated: true, userName } });

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
    const push = new PushQueue(store, { targets: LOCAL, initialDelayMs: 10, attempts: 3, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    await push.send(update('t1', TaskState.TASK_STATE_WORKING), context);
    await push.send(update('t1', TaskState.TASK_STATE_COMPLETED), context);
    // Delivered once the queue has the webhook's answer, a moment after the webhook took the body.
    await until('both updates delivered', () => received.length === 2 && push.delivered === 2);
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
    const push = new PushQueue(store, { targets: LOCAL, maxQueuedPerCaller: 2, timeoutMs: 60_000, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await push.send(update('t3', TaskState.TASK_STATE_WORKING), context);
    expect(Date.now() - started).toBeLessThan(1_000);
    // One delivery in flight (the webhook holds it), two waiting, two dropped.
    await until('the first delivery to reach the webhook', () => held.length === 1);
    expect(push.pending).toBe(3);
    expect(warnings).toEqual([expect.stringMatching(/^A2A push queue full \(the caller's own\): an update of task t3 to .* was dropped$/), expect.stringMatching(/was dropped$/)]);
    held.forEach((res) => res.writeHead(200).end());
  });

  it("one caller's hanging webhooks never delay or drop another caller's updates (attack)", async () => {
    const held: ServerResponse[] = [];
    const hanging = await webhook((_req, res) => held.push(res));
    const got: string[] = [];
    const bobs = await webhook((_req, res, body) => {
      got.push(/TASK_STATE_[A-Z_]+/.exec(body)?.[0] ?? body);
      res.writeHead(200).end();
    });
    servers.push(hanging.server, bobs.server);
    const warnings: string[] = [];
    const store = new InMemoryPushNotificationStore();
    const mal = caller('mal');
    const bob = caller('bob');
    // mal: 1,100 configurations to a webhook that never answers, on 11 tasks; bob: one, on his own task.
    for (let t = 0; t < 11; t++) for (let i = 0; i < 100; i++) await store.save(`mal-${t}`, mal, { tenant: '', id: `h${i}`, taskId: `mal-${t}`, url: `${hanging.url}?${i}`, token: '', authentication: undefined });
    await store.save('bob-1', bob, { tenant: '', id: 'b', taskId: 'bob-1', url: bobs.url, token: '', authentication: undefined });
    const push = new PushQueue(store, { targets: LOCAL, timeoutMs: 60_000, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    for (let t = 0; t < 11; t++) await push.send(update(`mal-${t}`, TaskState.TASK_STATE_WORKING), mal);
    await push.send(update('bob-1', TaskState.TASK_STATE_WORKING), bob);
    await push.send(update('bob-1', TaskState.TASK_STATE_COMPLETED), bob);
    await until("bob's updates delivered", () => got.length === 2);
    expect(got).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    // mal holds a bounded number of sockets and queued updates; what it lost was its own.
    expect(held.length).toBeLessThanOrEqual(4);
    expect(push.pending).toBeLessThanOrEqual(104);
    expect(warnings.every((w) => /task mal-/.test(w))).toBe(true);
    held.forEach((res) => res.writeHead(200).end());
  });

  it('never reaches a refused address: not at registration, not at delivery, not through a redirect (attack)', async () => {
    let internalHits = 0;
    const internal = await webhook((_req, res) => {
      internalHits++;
      res.writeHead(200).end();
    });
    const redirecting = await webhook((_req, res) => res.writeHead(302, { location: internal.url }).end());
    servers.push(internal.server, redirecting.server);
    const redirectPort = new URL(redirecting.url).port;
    const targets = new PushTargets([`127.0.0.1:${redirectPort}`]);
    const configs = new PushConfigs(targets, { perTask: 5, perCaller: 50 });
    const mal = caller('mal');
    const refusal = (url: string) => configs.save('t', mal, { tenant: '', id: '', taskId: 't', url, token: '', authentication: undefined }).then(() => 'accepted', (error: Error) => error.message);
    // Loopback ports of the system itself, cloud metadata, other schemes, http to an unlisted host, a name that resolves to loopback.
    expect(await refusal(internal.url)).toMatch(/^forbidden: a push URL is https; http only to the hosts the operator lists/);
    expect(await refusal(`https://127.0.0.1:${new URL(internal.url).port}/hook`)).toMatch(/^forbidden: 127\.0\.0\.1 resolves to 127\.0\.0\.1 is a loopback/);
    expect(await refusal('https://169.254.169.254/latest/meta-data/')).toMatch(/^forbidden: .*169\.254\.169\.254 is a loopback, private, link-local/);
    expect(await refusal('https://[::ffff:10.0.0.1]/hook')).toMatch(/^forbidden: /);
    expect(await refusal('https://localhost/hook')).toMatch(/^forbidden: localhost resolves to/);
    expect(await refusal('file:///etc/passwd')).toMatch(/^forbidden: a push URL is https \(got file:\)/);
    expect(await refusal('ftp://example.org/x')).toMatch(/^forbidden: a push URL is https \(got ftp:\)/);
    expect(await refusal('https://user:pw@example.org/x')).toMatch(/^forbidden: a push URL carries no user or password/);
    expect(await configs.load('t', mal)).toEqual([]);
    expect(['10.1.2.3', '192.168.0.1', '172.20.0.1', '100.64.0.1', 'fd00:ec2::254', 'fe80::1', '::1', '0.0.0.0'].map((a) => refusedAddress(a) !== undefined)).toEqual(Array(8).fill(true));
    expect(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'].map(refusedAddress)).toEqual([undefined, undefined]);

    // A listed host that answers with a redirect to an internal address: the redirect is not followed.
    expect(await refusal(redirecting.url)).toBe('accepted');
    const warnings: string[] = [];
    const push = new PushQueue(configs, { targets, attempts: 2, initialDelayMs: 10, logger: { warn: (m: string) => warnings.push(m) } });
    queues.push(push);
    await push.send(update('t', TaskState.TASK_STATE_WORKING), mal);
    await until('the delivery given up', () => warnings.length === 1);
    expect(warnings[0]).toMatch(/given up after 2 attempts: HTTP 302$/);
    expect(internalHits).toBe(0);
  });

  it('bounds the push configurations of a task and of a caller, and a revoked task takes none (attack)', async () => {
    const configs = new PushConfigs(LOCAL, { perTask: 3, perCaller: 5 });
    const mal = caller('mal');
    const save = (taskId: string, id: string) => configs.save(taskId, mal, { tenant: '', id, taskId, url: 'http://127.0.0.1:9/hook', token: '', authentication: undefined }).then(() => 'ok', (error: Error) => error.message);
    const answers: string[] = [];
    for (let i = 0; i < 200; i++) answers.push(await save('t1', `c${i}`));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(3);
    expect(answers[3]).toMatch(/^too_many_sessions: task t1 has 3 push configurations, the most a task may have/);
    // Setting one again (same id) is no new configuration.
    expect(await save('t1', 'c0')).toBe('ok');
    expect(await save('t2', 'a')).toBe('ok');
    expect(await save('t2', 'b')).toBe('ok');
    expect(await save('t3', 'a')).toMatch(/^too_many_sessions: this caller has 5 push configurations/);
    // Another caller has its own share.
    expect(await configs.save('t9', caller('bob'), { tenant: '', id: 'x', taskId: 't9', url: 'http://127.0.0.1:9/hook', token: '', authentication: undefined })).toBeUndefined();
    await configs.delete('t2', mal, 'a');
    expect(await save('t3', 'a')).toBe('ok');
    await configs.revoke('t1', mal);
    expect(await configs.load('t1', mal)).toEqual([]);
    expect(await save('t1', 'again')).toMatch(/^forbidden: task t1 pushes nothing more/);
  });
});
