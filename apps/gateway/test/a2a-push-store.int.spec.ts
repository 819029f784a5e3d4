/**
 * A2A push configurations where every gateway replica finds them: two replicas' PushConfigs over
 * one JetStream key-value bucket (the test's own, on the shared NATS server) see each other's
 * configurations, count them in the same bounds, refuse a task one of them revoked and push an
 * update both follow once (the first to claim it); a
 * standalone gateway's file in its data directory gives them back after a restart; each expires
 * its time after it was last set, or soon after its task ended. Without JetStream on its NATS server a gateway does not start.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { startNatsServer, TEST_NATS_URL } from '@agora/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { PushConfigs, updateOnEveryFollower } from '../src/a2a/push.js';
import { FileRecords, KvRecords, openSharedRecords, PUSH_CONFIGS_FILE } from '../src/a2a/push-store.js';
import { PushTargets } from '../src/a2a/push-target.js';

const LOCAL = new PushTargets(['127.0.0.1']);
const caller = (userName: string) => new ServerCallContext({ requestedVersion: '1.0', user: { isAuthenticated: true, userName } });
const config = (id: string, taskId: string): TaskPushNotificationConfig => ({ tenant: '', id, taskId, url: `http://127.0.0.1:9/${id}`, token: `token-${id}`, authentication: undefined });
const ids = async (configs: PushConfigs, taskId: string, userName: string) => (await configs.load(taskId, caller(userName))).map((c) => c.id).sort();

describe('A2A push configurations shared by replicas and kept across restarts (int)', () => {
  const connections: NatsConnection[] = [];
  const scope = `TEST_${randomBytes(5).toString('hex')}`;
  const bucket = `A2A_PUSH_${scope}`;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-a2a-push-store-'));
  });

  afterAll(async () => {
    const jsm = await jetstreamManager(connections[0]!);
    await jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
    await Promise.all(connections.map((c) => c.close()));
    await rm(dir, { recursive: true, force: true });
  });

  /** A replica's configurations over its own NATS connection, in the test's bucket. */
  const replica = async (bounds: { perTask: number; perCaller: number; ttlMs?: number } = { perTask: 2, perCaller: 3 }) => {
    const connection = await connect({ servers: TEST_NATS_URL });
    connections.push(connection);
    return new PushConfigs(LOCAL, bounds, await openSharedRecords({ connection, scope }, 60_000));
  };

  it('a configuration set on one replica is listed, bounded, deleted and revoked on another', async () => {
    const one = await replica();
    const two = await replica();
    await one.save('vote:voting_session-a', caller('envoy'), config('c1', 'vote:voting_session-a'));
    expect(await ids(two, 'vote:voting_session-a', 'envoy')).toEqual(['c1']);
    const [stored] = await two.loadWithMetadata('vote:voting_session-a', caller('envoy'));
    expect(stored).toEqual({ config: config('c1', 'vote:voting_session-a'), wireVersion: '1.0' });
    // Another caller sees none of it.
    expect(await ids(two, 'vote:voting_session-a', 'nova')).toEqual([]);

    // The bounds count what every replica holds: 2 per task, 3 per caller.
    await two.save('vote:voting_session-a', caller('envoy'), config('c2', 'vote:voting_session-a'));
    await expect(one.save('vote:voting_session-a', caller('envoy'), config('c3', 'vote:voting_session-a'))).rejects.toThrow(/too_many_sessions: task .* has 2 push configurations/);
    await one.save('vote:voting_session-b', caller('envoy'), config('c3', 'vote:voting_session-b'));
    await expect(two.save('vote:voting_session-c', caller('envoy'), config('c4', 'vote:voting_session-c'))).rejects.toThrow(/too_many_sessions: this caller has 3 push configurations/);
    // Set again (the same id), a configuration is replaced, not counted twice.
    await two.save('vote:voting_session-a', caller('envoy'), { ...config('c2', 'vote:voting_session-a'), url: 'http://127.0.0.1:9/again' });
    expect((await one.load('vote:voting_session-a', caller('envoy'))).find((c) => c.id === 'c2')?.url).toBe('http://127.0.0.1:9/again');

    await one.delete('vote:voting_session-a', caller('envoy'), 'c1');
    expect(await ids(two, 'vote:voting_session-a', 'envoy')).toEqual(['c2']);

    // Revoked where its follower runs: its configurations go, and no replica takes another for it.
    await one.revoke('vote:voting_session-b', caller('envoy'));
    expect(await ids(two, 'vote:voting_session-b', 'envoy')).toEqual([]);
    await expect(two.save('vote:voting_session-b', caller('envoy'), config('c5', 'vote:voting_session-b'))).rejects.toThrow(/forbidden: task .* pushes nothing more/);
    const info = await (await jetstreamManager(connections[0]!)).streams.info(`KV_${bucket}`);
    expect(info.config.max_age).toBe(60_000 * 1_000_000);
  });

  it("an update every follower of a task sends is claimed by one replica only, and another update by the first to claim it", async () => {
    const one = await replica();
    const two = await replica();
    const status = (progress: string) => updateOnEveryFollower({ payload: { $case: 'statusUpdate', value: { taskId: 't', contextId: 't', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: { agora: { progress } } } } })!;
    expect(status('cancelled:0:false:null')).toBe(`status:${TaskState.TASK_STATE_CANCELED}:cancelled:0:false:null`);
    const claims = await Promise.all([one.claim('vote:voting_session-d', caller('envoy'), status('p1')), two.claim('vote:voting_session-d', caller('envoy'), status('p1'))]);
    expect(claims.sort()).toEqual([false, true]);
    expect(await two.claim('vote:voting_session-d', caller('envoy'), status('p2'))).toBe(true);
    // Another caller's task of the same id claims its own.
    expect(await one.claim('vote:voting_session-d', caller('nova'), status('p1'))).toBe(true);
    // A request's own updates (no progress of the aggregate) are not claimed: only the gateway it reached sends them.
    expect(updateOnEveryFollower({ payload: { $case: 'statusUpdate', value: { taskId: 't', contextId: 't', status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: '' }, metadata: undefined } } })).toBeUndefined();
  });

  it('a configuration expires its time after it was last set', async () => {
    const connection = await connect({ servers: TEST_NATS_URL });
    connections.push(connection);
    const records = await KvRecords.open(connection, bucket, 60_000);
    const short = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3, ttlMs: 300 }, records);
    await short.save('vote:voting_session-x', caller('ttl'), config('t1', 'vote:voting_session-x'));
    expect(await ids(short, 'vote:voting_session-x', 'ttl')).toEqual(['t1']);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await ids(short, 'vote:voting_session-x', 'ttl')).toEqual([]);
    // Met expired, it was deleted from the bucket.
    expect([...(await records.list('cfg.')).keys()].some((key) => key.includes(Buffer.from('ttl').toString('base64url')))).toBe(false);
  });

  it("an ended task's configurations are kept a little longer only, on every replica", async () => {
    const connection = await connect({ servers: TEST_NATS_URL });
    connections.push(connection);
    const records = await KvRecords.open(connection, bucket, 60_000);
    const one = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3, afterEndMs: 300 }, records);
    const two = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3 }, records);
    await one.save('vote:voting_session-e', caller('ended'), config('e1', 'vote:voting_session-e'));
    await one.ended('vote:voting_session-e', caller('ended'));
    expect(await ids(two, 'vote:voting_session-e', 'ended')).toEqual(['e1']);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await ids(two, 'vote:voting_session-e', 'ended')).toEqual([]);
  });

  it('a gateway on a NATS server without JetStream does not start, and says why', async () => {
    const plain = await startNatsServer({ jetstream: false });
    try {
      const connection = await connect({ servers: plain.url });
      connections.push(connection);
      await expect(openSharedRecords({ connection, scope: 'AGORA_EVENTS' }, 60_000)).rejects.toThrow(/^A2A push configurations: the JetStream key-value bucket A2A_PUSH_AGORA_EVENTS could not be opened \(.+\): the gateway needs JetStream on its NATS server/);
    } finally {
      await connections.pop()?.close();
      await plain.stop();
    }
  }, 30_000);

  it('standalone, a file in the data directory gives them back after a restart, without the expired ones', async () => {
    const first = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3 }, await FileRecords.open(dir));
    await first.save('vote:voting_session-f', caller('envoy'), config('f1', 'vote:voting_session-f'));
    const short = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3, ttlMs: 1 }, await FileRecords.open(dir));
    await short.save('vote:voting_session-g', caller('envoy'), config('g1', 'vote:voting_session-g'));
    await new Promise((resolve) => setTimeout(resolve, 10));

    const restarted = new PushConfigs(LOCAL, { perTask: 2, perCaller: 3 }, await FileRecords.open(dir));
    await restarted.prune();
    expect(await ids(restarted, 'vote:voting_session-f', 'envoy')).toEqual(['f1']);
    expect(await ids(restarted, 'vote:voting_session-g', 'envoy')).toEqual([]);
    expect(Object.keys(JSON.parse(await readFile(join(dir, PUSH_CONFIGS_FILE), 'utf8')) as object)).toHaveLength(1);
  });
});
