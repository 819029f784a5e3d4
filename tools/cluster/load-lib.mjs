// The load of the fault runs (cluster:faults, cluster:partitions): signed commands sent a fixed number
// at a time, each sent again with the same envelope (the same commandId) until acknowledged; the wait
// for the log stream to settle; the whole log read back.
import { setTimeout as sleep } from 'node:timers/promises';
import { openJetStreamEventStore } from '@agora/eventstore';
import { LOG_STREAM } from './cluster-lib.mjs';

/** Reply codes after which the same envelope is sent again: the command may not have been decided. */
export const RETRYABLE = new Set(['timeout', 'unavailable', 'conflict', 'internal']);

/** `values[name]` (else `fallback`) as a positive number; exits with code 2 and `help` otherwise. */
export function positiveOption(values, name, { program, help, fallback }) {
  const raw = values[name] ?? fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`${program}: --${name} must be a positive number, got ${JSON.stringify(raw)}\n\n${help}`);
    process.exit(2);
  }
  return n;
}

/** The comma-separated `list` of scenarios, each one of `known`; exits with code 2 naming one that is not. */
export function scenarioList(list, known, program) {
  const scenarios = list.split(',').map((s) => s.trim());
  const unknown = scenarios.find((s) => !known.includes(s));
  if (unknown !== undefined) {
    console.error(`${program}: unknown scenario ${JSON.stringify(unknown)} (known: ${known.join(', ')})`);
    process.exit(2);
  }
  return scenarios;
}

/**
 * Sends one command until it is acknowledged: `send()` resolves to its reply (or throws: no reply),
 * the same envelope every attempt, 200 ms apart. `onRefusal(code)` hears every refusal ('no reply'
 * for none). Returns { ok, reply, attempts, ackedAt }, { ok: false, refused, attempts } on a refusal
 * not worth sending again, or { ok: false, attempts, last } after `giveUpMs`.
 */
export async function untilAcknowledged(send, { giveUpMs, onRefusal = () => undefined }) {
  const started = Date.now();
  let attempts = 0;
  let last;
  while (Date.now() - started < giveUpMs) {
    attempts++;
    try {
      const reply = await send();
      if (reply.ok) return { ok: true, reply, attempts, ackedAt: Date.now() };
      onRefusal(reply.error.code);
      last = reply.error.code;
      if (!RETRYABLE.has(reply.error.code)) return { ok: false, refused: reply.error, attempts };
    } catch (error) {
      onRefusal('no reply');
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(200);
  }
  return { ok: false, attempts, last };
}

/**
 * Sends `count` commands, `inflight` at a time: `make(i)` gives { commandId, send } (untilAcknowledged's
 * `send`); `onAck(acked, at)` hears each acknowledgement count; commands from index `holdFrom` wait for
 * `hold` (a promise) before they are sent. Resolves to each command's { commandId, ...result }.
 */
export async function drive(count, make, { inflight, giveUpMs, onRefusal, onAck, holdFrom = Infinity, hold }) {
  const results = new Array(count);
  let next = 0;
  let acked = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      if (i >= holdFrom) await hold;
      const { commandId, send } = make(i);
      const result = await untilAcknowledged(send, { giveUpMs, onRefusal });
      results[i] = { commandId, ...result };
      if (result.ok) onAck?.(++acked, result.ackedAt);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
  return results;
}

/**
 * Waits until the log stream has a leader and both other replicas are current (and `also()`, when
 * given, resolves to { ok, state }); resolves to the leader's name.
 */
export async function logStreamSettled(jsm, what, { timeoutMs = 120_000, also } = {}) {
  const deadline = Date.now() + timeoutMs;
  let state = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const info = await jsm.streams.info(LOG_STREAM);
      const peers = info.cluster?.replicas ?? [];
      const more = also ? await also() : { ok: true };
      state = `leader ${info.cluster?.leader ?? 'none'}, replicas ${peers.map((p) => `${p.name}${p.current ? '' : ' (catching up)'}${p.offline ? ' (offline)' : ''}`).join(', ')}${more.state ? `; ${more.state}` : ''}`;
      if (info.cluster?.leader && peers.length === 2 && peers.every((p) => p.current && !p.offline) && more.ok) return info.cluster.leader;
    } catch (error) {
      state = error instanceof Error ? error.message : String(error);
    }
    await sleep(500);
  }
  throw new Error(`${what}: the cluster did not settle within ${timeoutMs / 1000} s (${state})`);
}

/** Every event of the log (as `credentials`' user when given), read again on a failure: a leader election may be under way. */
export async function readLog(urls, credentials) {
  for (let attempt = 1; ; attempt++) {
    const store = await openJetStreamEventStore({ servers: urls, logger: { warn: () => undefined }, ...(credentials ? { credentials } : {}) });
    try {
      const events = [];
      for await (const event of store.readAll()) events.push(event);
      return events;
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(1000);
    } finally {
      await store.close();
    }
  }
}
