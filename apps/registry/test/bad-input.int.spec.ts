// Bad input is a 400 over HTTP and the same refusal over NATS and in-process, never a 500: a body
// nested ten thousand levels deep, sent raw to the registry's subject (both transports) and to the
// gateway. A body nested to the limit is still parsed (and refused for what it says, not its depth).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, Reply as ReplySchema, type Reply } from '@agora/contracts';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the same bad body over HTTP, through the gateway, as standalone mode wires them.
import { startGateway, type Gateway } from '@agora/gateway';
import { decodeJson, MAX_JSON_DEPTH, type NatsAgoraClient } from '@agora/messaging';
import { openServiceContext, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { startNatsServer, uniqueJetStreamLog, type PrivateNatsServer } from '@agora/testing';
import { startRegistryService } from '../src/registry-service.js';

const nested = (depth: number) => `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
const TOO_DEEP = nested(10_000);
const DEEPEST_ALLOWED = nested(MAX_JSON_DEPTH);
const MESSAGE = `the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; the limit is ${MAX_JSON_DEPTH}`;

type Setup = { name: string; config: (dir: string) => Pick<RuntimeConfig, 'store' | 'natsUrl'> };
const setups: Setup[] = [
  { name: 'in-process transport', config: (dir) => ({ store: { kind: 'embedded', directory: join(dir, 'events') }, natsUrl: undefined }) },
  {
    name: 'NATS transport',
    config: () => {
      const { streamName, subjectPrefix } = uniqueJetStreamLog('badinput', nats.url);
      return { store: { kind: 'jetstream', servers: nats.url, streamName, subjectPrefix }, natsUrl: nats.url };
    },
  },
];

let nats: PrivateNatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(() => nats?.stop());

describe.each(setups)('a body nested too deep ($name)', ({ config: storeConfig }) => {
  let dir: string;
  let context: ServiceContext;
  let gateway: Gateway;
  let close: () => Promise<void>;

  /** Raw bytes to a subject, the reply parsed as an Agora reply. */
  const raw = async (body: string): Promise<Reply> => {
    const bytes = new TextEncoder().encode(body);
    const transport = context.transport;
    const reply =
      transport.transport === 'in-process'
        ? (await transport.bus.request(RegisterAgent.subject, bytes, { timeoutMs: 5_000 })).data
        : (await (context.client as NatsAgoraClient).connection.request(RegisterAgent.subject, bytes, { timeout: 5_000 })).data;
    return ReplySchema.parse(decodeJson(reply)) as Reply;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-bad-input-'));
    context = await openServiceContext({ ...storeConfig(dir), dataDir: dir, operators: [], maxClockSkewMs: 300_000, requestTimeoutMs: 5_000 });
    const running = await startRegistryService(context, { logger: false });
    gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false });
    close = async () => {
      await gateway.close();
      await running.close();
    };
  });
  afterAll(async () => {
    await close?.();
    await context?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('on the service subject: invalid_command with the limit, nothing else', async () => {
    expect(await raw(TOO_DEEP)).toEqual({ ok: false, error: { code: 'invalid_command', message: MESSAGE, details: { maxDepth: MAX_JSON_DEPTH } } });
    // At the limit the body is read, and refused for what it is (not a signed envelope).
    expect(await raw(DEEPEST_ALLOWED)).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    expect((await raw(DEEPEST_ALLOWED)) as { error: { message: string } }).not.toMatchObject({ error: { message: MESSAGE } });
  }, 30_000);

  it('over HTTP: 400 with the same message; brackets inside strings do not count', async () => {
    const post = (body: string) => fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const deep = await post(TOO_DEEP);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({ ok: false, error: { code: 'invalid_command', message: MESSAGE } });
    const inString = await post(`{"x":"${'['.repeat(10_000)}"}`);
    expect(inString.status).toBe(400);
    expect(((await inString.json()) as { error: { message: string } }).error.message).not.toBe(MESSAGE);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  }, 30_000);
});
