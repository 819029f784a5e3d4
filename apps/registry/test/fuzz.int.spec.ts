// Property-based fuzzing of a real registry service (support/fuzz-cases.ts makes the hostile
// requests). For every case: the reply is an error with exactly the code the case was built to
// get, nothing is written to the log, and the service then still accepts a valid command.
// Three ways in: the in-process transport with the embedded store (standalone mode), NATS with a
// JetStream log, and HTTP through the gateway (POST /v1/commands), where the status must be the
// code's status too. Runs with a fixed seed (FUZZ_SEED overrides it, FUZZ_RUNS_SCALE scales the
// number of cases: a quarter of them in the tests' usual run, all under npm run test:full); on a
// failure fast-check prints the seed and path that replay it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DisableAgent, httpStatusOf, RegisterAgent, Reply as ReplySchema, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import type { EventStore, RecordedEvent } from '@agora/eventstore';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the HTTP property drives this service through the gateway, as standalone mode wires them.
import { startGateway, type Gateway } from '@agora/gateway';
import { generateKeyPair, type SignedCommand } from '@agora/identity';
import { decodeJson, NatsAgoraClient, NatsWire, type AgoraClient, type WireConnection } from '@agora/messaging';
import { openServiceContext, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { scaled, startNatsServer, uniqueJetStreamLog, waitFor, type PrivateNatsServer } from '@agora/testing';
import fc from 'fast-check';
import { startRegistryService } from '../src/registry-service.js';
import { buildCase, displayNameArbitrary, MAX_CLOCK_SKEW_MS, recipes, signAs, type Accepted, type Body, type BuiltCase, type Cast, type Recipe, type World } from './support/fuzz-cases.js';
import { expectOnlyReplicas } from './support/registry-process.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_122);
const SCALE = Number(process.env['FUZZ_RUNS_SCALE'] ?? scaled(0.25, 1));
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const TIMEOUT_MS = 10_000;

type StoreSetup = (dir: string) => Pick<RuntimeConfig, 'store' | 'natsUrl'>;
const inProcess: StoreSetup = (dir) => ({ store: { kind: 'embedded', directory: join(dir, 'events') }, natsUrl: undefined });
const overNats: StoreSetup = () => {
  const { streamName, subjectPrefix } = uniqueJetStreamLog('fuzz', nats.url);
  return { store: { kind: 'jetstream', servers: nats.url, streamName, subjectPrefix }, natsUrl: nats.url };
};

// A NATS server of this file's own: on the shared one, other runs' registries would join the queue group.
let nats: PrivateNatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(() => nats?.stop());

interface FuzzWorld extends World {
  accepted: Accepted[];
  context: ServiceContext;
  client: AgoraClient;
  wire: WireConnection;
  store: EventStore;
  /** Position of the last event in the log: everything after it was written by the current case. */
  position: string | undefined;
  followUps: number;
  close(): Promise<void>;
}

async function eventsAfter(store: EventStore, position: string | undefined): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for await (const event of store.readAll(position === undefined ? {} : { after: position })) events.push(event);
  return events;
}

/** A registry service with its cast registered by the bootstrap operator, and carol disabled. */
async function openWorld(setup: StoreSetup): Promise<FuzzWorld> {
  // On tmpfs when there is one: this is about the command gate, not durability, and an fsync per case would double the time.
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'agora-registry-fuzz-'));
  const cast: Cast = { root: generateKeyPair(), alice: generateKeyPair(), bob: generateKeyPair(), carol: generateKeyPair(), target: generateKeyPair(), stranger: generateKeyPair() };
  const context = await openServiceContext({ ...setup(dir), dataDir: dir, operators: [{ agentId: 'root', publicKey: cast.root.publicKey }], maxClockSkewMs: MAX_CLOCK_SKEW_MS, requestTimeoutMs: TIMEOUT_MS });
  const running = await startRegistryService(context, { logger: false });
  const close = async () => {
    await running.close();
    await context.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const wire: WireConnection = context.transport.transport === 'in-process' ? context.transport.bus : new NatsWire((context.client as NatsAgoraClient).connection);
    if (context.client instanceof NatsAgoraClient) await expectOnlyReplicas(context.client.connection, [running.service.id]);
    const world: FuzzWorld = { cast, accepted: [], context, client: context.client, wire, store: context.store, position: undefined, followUps: 0, close };
    const setUp = async (type: string, subject: string, payload: Record<string, unknown>) => {
      const envelope = signAs(world, type, payload, 'root', 'root');
      const reply = await context.client.request<CommandResult>(subject, envelope, { timeoutMs: TIMEOUT_MS });
      if (!reply.ok) throw new Error(`set-up ${type} failed: ${JSON.stringify(reply)}`);
      world.accepted.push({ envelope, result: reply.result });
    };
    for (const [agentId, roles] of [['alice', ['operator']], ['bob', ['observer']], ['carol', ['operator']], ['target', ['executive']]] as const) {
      await setUp('RegisterAgent', RegisterAgent.subject, { agentId, publicKey: cast[agentId].publicKey, displayName: agentId, roles: [...roles] });
    }
    await setUp('DisableAgent', DisableAgent.subject, { agentId: 'carol', reason: 'fuzzing' });
    await waitFor(async () => (await context.registry.agent('carol'))?.status === 'disabled', 'the directory to see carol disabled');
    world.position = (await eventsAfter(context.store, undefined)).at(-1)?.position;
    return world;
  } catch (error) {
    await close();
    throw error;
  }
}

function checkReply(reply: Reply, expected: BuiltCase['expected']): void {
  if (typeof expected === 'string') {
    if (reply.ok || reply.error.code !== expected) throw new Error(`expected ${expected}, got ${JSON.stringify(reply).slice(0, 600)}`);
    return;
  }
  // A replay answers with the first result, `duplicate: true` (from the reply cache or from the log).
  expect(reply).toEqual({ ok: true, result: { ...expected.replayOf.result, duplicate: true } });
}

function parseReply(bytes: Uint8Array, what: string): Reply {
  const reply = ReplySchema.safeParse(decodeJson(bytes));
  if (!reply.success) throw new Error(`${what} is not an Agora reply: ${new TextDecoder().decode(bytes).slice(0, 300)}`);
  return reply.data as Reply;
}

/**
 * One case: `attack` sends the hostile request and checks its reply, then `valid` sends a valid
 * command; the log must have gained exactly that command's event.
 */
async function fuzzCase(world: FuzzWorld, attack: () => Promise<void>, valid: (envelope: SignedCommand) => Promise<Reply<CommandResult>>, name: string): Promise<void> {
  const before = world.position;
  try {
    await attack();
    const envelope = signAs(world, 'UpdateAgent', { agentId: 'target', displayName: `#${world.followUps++} ${name}` }, 'alice', 'alice');
    const reply = await valid(envelope);
    if (!reply.ok || reply.result.events.join() !== 'AgentUpdated') throw new Error(`the service no longer serves a valid command: ${JSON.stringify(reply).slice(0, 600)}`);
    const all = await eventsAfter(world.store, before);
    // The command's id reservation (commandid-<id>) comes first, then its event.
    expect(all.map((e) => e.streamId)).toEqual([`commandid-${envelope.commandId}`, 'agent-target']);
    const written = all.filter((e) => e.streamId === 'agent-target');
    expect(written.map((e) => e.metadata['commandId'])).toEqual([envelope.commandId]);
    world.position = all.at(-1)!.position;
    world.accepted.push({ envelope, result: reply.result });
  } catch (error) {
    // Whatever went wrong, the next case (and fast-check's shrinking) starts from the log's real end.
    world.position = (await eventsAfter(world.store, before)).at(-1)?.position ?? before;
    throw error;
  }
}

function tally(kinds: Map<string, number>, kind: string): void {
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}
function summary(what: string, kinds: Map<string, number>, started: number): string {
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  return `${what}: ${total} cases in ${((performance.now() - started) / 1000).toFixed(1)} s (seed ${SEED}): ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`;
}

describe.each([
  { name: 'in-process transport, embedded store', setup: inProcess, numRuns: runs(2_000) },
  { name: 'NATS transport, JetStream store', setup: overNats, numRuns: runs(400) },
])('fuzzing the registry ($name)', ({ name, setup, numRuns }) => {
  let world: FuzzWorld;

  beforeAll(async () => {
    world = await openWorld(setup);
  }, 30_000);
  afterAll(() => world?.close());

  const send = async (built: BuiltCase): Promise<Reply> => {
    if ('json' in built.body) return world.client.request(built.subject, built.body.json, { timeoutMs: TIMEOUT_MS });
    // Raw bytes go through the transport as they are; the reply must still be an Agora reply.
    const message = await world.wire.request(built.subject, built.body.bytes, { timeoutMs: TIMEOUT_MS });
    return parseReply(message.data, 'the reply to raw bytes');
  };

  it(`answers ${numRuns} hostile requests each with its own error code, writes nothing for them, and keeps serving`, async () => {
    const kinds = new Map<string, number>();
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(recipes, displayNameArbitrary, async (recipe: Recipe, followUpName) => {
        tally(kinds, recipe.kind);
        await fuzzCase(
          world,
          async () => {
            const built = buildCase(recipe, world);
            checkReply(await send(built), built.expected);
          },
          (envelope) => world.client.request<CommandResult>(UpdateAgent.subject, envelope, { timeoutMs: TIMEOUT_MS }),
          followUpName,
        );
      }),
      { seed: SEED, numRuns },
    );
    console.log(summary(name, kinds, started));
  }, 120_000);
});

describe('fuzzing the registry through the HTTP gateway (POST /v1/commands)', () => {
  let world: FuzzWorld;
  let gateway: Gateway;

  beforeAll(async () => {
    world = await openWorld(inProcess);
    gateway = await startGateway({ client: world.client, store: world.store, port: 0, host: '127.0.0.1', logger: false });
  }, 30_000);
  afterAll(async () => {
    await gateway?.close();
    await world?.close();
  });

  const post = async (body: Body, contentType: string | undefined): Promise<{ status: number; reply: Reply }> => {
    const bytes = 'json' in body ? new TextEncoder().encode(JSON.stringify(body.json)) : body.bytes;
    const res = await fetch(`${gateway.url}/v1/commands`, { method: 'POST', body: bytes, headers: contentType === undefined ? {} : { 'content-type': contentType } });
    return { status: res.status, reply: parseReply(new Uint8Array(await res.arrayBuffer()), `the HTTP ${res.status} answer`) };
  };

  // The gateway routes a command by the envelope's `type`, not by a subject: the two recipes that
  // put a valid envelope on another subject have no HTTP form (over HTTP they are valid commands).
  const httpRecipes = recipes.filter((r) => r.kind !== 'wrong-subject' && r.kind !== 'unserved-subject');
  const jsonContentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.agora.command+json', 'application/json;charset=latin1');
  const otherContentType = fc.constantFrom(undefined, '', 'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json5', 'application/xml', 'json', 'application/+json', 'application/json-seq');
  const contentTypes = fc.oneof({ arbitrary: jsonContentType.map((type) => ({ type, json: true })), weight: 5 }, { arbitrary: otherContentType.map((type) => ({ type, json: false })), weight: 1 });

  it(`answers ${runs(400)} hostile HTTP requests with the status of their error code, writes nothing for them, and keeps serving`, async () => {
    const kinds = new Map<string, number>();
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(httpRecipes, contentTypes, displayNameArbitrary, async (recipe, contentType, followUpName) => {
        tally(kinds, contentType.json ? recipe.kind : 'wrong-content-type');
        await fuzzCase(
          world,
          async () => {
            const built = buildCase(recipe, world);
            const { status, reply } = await post(built.body, contentType.type);
            if (!contentType.json) {
              // Not JSON by its content type: refused before the body is read (415, code invalid_command).
              checkReply(reply, 'invalid_command');
              expect(status).toBe(415);
              return;
            }
            checkReply(reply, built.expected);
            expect(status).toBe(reply.ok ? 200 : httpStatusOf(reply.error.code));
          },
          async (envelope) => {
            const { status, reply } = await post({ json: envelope }, 'application/json');
            expect(status).toBe(200);
            return reply as Reply<CommandResult>;
          },
          followUpName,
        );
      }),
      { seed: SEED, numRuns: runs(400) },
    );
    console.log(summary('HTTP gateway, in-process transport', kinds, started));
  }, 120_000);
});
