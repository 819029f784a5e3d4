// The agents of `npm run day`: a fleet file made for --agents agents (every role of the protocols),
// run by the fleet's own runner (@agora/participants) half over NATS and half through the gateway,
// and the stand-in model servers behind them (libs/providers), whose answers take as long as real
// ones: a median of about 2 s, a tail to 20 s, 1 % server errors and 2 % rate limits (429 with
// retry-after), all drawn from a seeded generator so that two runs of one size draw alike.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectFleet, fleetStandInScript, parseFleetFile, startFleet } from '@agora/participants';
import { DEFAULT_PRICES, ProviderLayer, StandIns } from '@agora/providers';

const CONSTITUTIONS = ['risk', 'premise', 'evidence', 'execution'];
const SPECIALIZATIONS = ['security', 'compliance', 'operations', 'planning'];
const PERSONAS = ['Michael Saylor: Bitcoin maximalist', 'Arthur Hayes: macro trader'];
const MODELS = ['openai:gpt-4.1', 'anthropic:claude-sonnet-4-20250514', 'google:gemini-2.5-flash'];

/** A small seeded generator (mulberry32): the same draws for the same seed. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How long a model takes and whether it fails, per call: log-normal around a median of 2 s (most
 * answers in 1-3 s), one call in a hundred 10-20 s, capped at 20 s; 1 % answered 500, 2 % 429.
 */
export function modelTiming(random) {
  return () => {
    const roll = random();
    if (roll < 0.01) return { fail: { status: 500, message: 'stand-in: the model server failed' }, delayMs: Math.round(200 + random() * 800) };
    if (roll < 0.03) return { fail: { status: 429, message: 'stand-in: rate limited', retryAfterSeconds: 1 }, delayMs: 50 };
    const u1 = Math.max(random(), 1e-9);
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random());
    const delay = random() < 0.01 ? 10_000 + random() * 10_000 : 2000 * Math.exp(0.45 * normal);
    return { delayMs: Math.round(Math.min(20_000, Math.max(300, delay))) };
  };
}

/**
 * The roles of `agents` agents: reviewers (a multiple of four, one per constitution in turn), validators,
 * debaters (in pairs), executives (who propose and ask for votes), and among them the paused agent
 * (an executive that reports a risk above its breaker and goes through recoveries). Every agent takes
 * turns in recoveries (dialectic).
 */
export function roster(agents) {
  const n = Math.max(12, agents);
  const reviewers = Math.max(4, Math.round((n * 0.3) / 4) * 4);
  const validators = Math.max(3, Math.round(n * 0.2));
  const debaters = Math.max(2, Math.round((n * 0.1) / 2) * 2);
  const executives = n - reviewers - validators - debaters;
  const list = [];
  for (let i = 0; i < reviewers; i++) list.push({ id: `reviewer-${i + 1}`, roles: ['reviewer', 'dialectic'], constitutions: [CONSTITUTIONS[i % 4]], trustScore: 700 - (i % 50) });
  for (let i = 0; i < validators; i++) list.push({ id: `validator-${i + 1}`, roles: ['validator', 'dialectic'], specializations: [SPECIALIZATIONS[i % 4]], trustScore: 900 - (i % 40) * 5 });
  for (let i = 0; i < debaters; i++) list.push({ id: `debater-${i + 1}`, roles: ['debater', 'dialectic'], persona: PERSONAS[i % 2] });
  for (let i = 0; i < executives; i++) list.push({ id: i === executives - 1 ? 'patient' : `executive-${i + 1}`, roles: ['executive', 'dialectic'], specializations: ['planning'] });
  return list.map((a, i) => ({ ...a, keyFile: `keys/${a.id}.key.json`, model: MODELS[i % MODELS.length] }));
}

/** The fleet file of the run, written to <dir>/fleet.json, parsed as `agora fleet run` parses it. */
export function fleetFile(dir, agents) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'fleet.json');
  const text = JSON.stringify({ defaults: { budget: 10_000, maxOutputTokens: 1200, temperature: 0.2 }, state: 'state', agents }, null, 2);
  writeFileSync(file, `${text}\n`);
  return parseFleetFile(text, file);
}

/** The stand-in model servers with real-model timing (seeded), and the provider layer pointed at them. */
export async function startModels(seed) {
  const answer = fleetStandInScript();
  const timing = modelTiming(seeded(seed));
  const stands = await StandIns.start(async (request, index) => {
    const { fail, delayMs } = timing();
    if (fail) return { ...fail, delayMs };
    return { ...(await answer(request, index)), delayMs };
  });
  const layer = new ProviderLayer({ providers: stands.providers, prices: { ...DEFAULT_PRICES }, currency: 'USD', timeoutMs: 30_000, maxAttempts: 3, backoffMs: 500 }, stands.env);
  return { stands, layer };
}

/**
 * Registers the fleet's agents (the fleet's own connect, with the operator key) and waits until each
 * reads as itself five times running: every replica of a cluster learns of a new agent from the log,
 * and a role loop that subscribes before the replica serving it has is refused as unknown.
 */
export async function register(fleet, connection) {
  const registered = await connectFleet(fleet, connection);
  try {
    const deadline = Date.now() + 60_000;
    for (const [id, client] of registered.clients) {
      for (let ok = 0; ok < 5; ) {
        ok = (await client.tryQuery('GetAgent', { agentId: id }).catch(() => ({ ok: false }))).ok ? ok + 1 : 0;
        if (Date.now() > deadline) throw new Error(`${id} was not known to every replica 60 s after it was registered`);
        await sleep(100);
      }
    }
  } finally {
    await registered.close();
  }
}

/**
 * Runs the fleet's agents in two halves, each through the fleet runner: one over NATS (as the NATS
 * user `agent`, catching up through the gateway), one through the gateway's HTTP API. The operator
 * key registers them. `onAction` and `onRefused` hear every participant's action and refusal.
 */
export async function startAgents({ dir, agents, layer, gatewayUrl, natsUrls, agentPassword, operatorKeyFile, onAction, onRefused }) {
  const all = roster(agents);
  const halves = [all.filter((_, i) => i % 2 === 0), all.filter((_, i) => i % 2 === 1)];
  const started = [];
  const transports = [{ nats: { servers: natsUrls, credentials: { user: 'agent', pass: agentPassword }, catchUpUrl: gatewayUrl } }, { url: gatewayUrl }];
  try {
    for (const [i, half] of halves.entries()) {
      const fleet = fleetFile(join(dir, `fleet-${i === 0 ? 'nats' : 'http'}`), half);
      await register(fleet, { ...transports[i], operatorKeyFile, currency: layer.currency });
      started.push(await startFleet({ fleet, layer, connection: { ...transports[i], operatorKeyFile }, checkpoints: 'memory', onAction, onRefused }));
    }
    await Promise.all(started.map((s) => s.ready));
  } catch (error) {
    await Promise.all(started.map((s) => s.close().catch(() => undefined)));
    throw error;
  }
  const clients = new Map(started.flatMap((s) => [...s.connection.clients]));
  // A loop that stops (its handler threw, Agora stayed unreachable) is named in `stopped`, and the run goes on without it.
  const stopped = [];
  for (const s of started) s.done.catch((error) => stopped.push(error instanceof Error ? error.message : String(error)));
  return {
    stopped,
    roster: all,
    clients,
    overNats: halves[0].map((a) => a.id),
    loops: started.reduce((n, s) => n + s.loops.length, 0),
    close: () => Promise.all(started.map((s) => s.close().catch(() => undefined))),
  };
}
