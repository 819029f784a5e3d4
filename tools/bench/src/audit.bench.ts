/**
 * Audit benchmark: events/s that `agora audit` verifies (envelope, Ed25519 signature under the key
 * the signer had then, authorization, per-stream chain, log checkpoints, every command decided
 * again), beside the raw replay rate of the same log (reading every event, nothing else).
 *
 *   npm run bench:audit -- [--events 50000] [--agents 500] [--workers 0,1,2]
 *
 * The log is written first, into an embedded store in a temporary directory, as the registry's
 * command gate writes it: agents registered by the operator, then health reports each agent
 * signs itself (one event per command, like most of the log), each decided by the registry's
 * decider and chained to its stream's previous commit, and a signed checkpoint of the whole log.
 * The figures are for that log; a log with more events per command verifies faster per event.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AUDIT_LOG_STREAM, commandByType } from '@agora/contracts';
import { auditLog } from '@agora/cli';
import { agentDecider, agentStreamId, type AgentState } from '@agora/domain-registry';
import { LOG_HASH_ALGORITHM, LogHasher, logCheckpointDecider, toEventData } from '@agora/eventsourcing';
import { openEmbeddedEventStore, type EventData, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, nextCommitLink, type KeyPair } from '@agora/identity';

const HELP = `Usage: npm run bench:audit -- [--events N] [--agents N] [--workers list]

  --events N      events in the log (default 50000)
  --agents N      agents (default 500); the rest are their signed health reports
  --workers list  worker-thread counts to measure the audit with (default 0 and ${Math.max(1, Math.min(4, availableParallelism() - 1))})
  -h, --help      this help`;

const { values } = parseArgs({ options: { events: { type: 'string' }, agents: { type: 'string' }, workers: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events ?? 50_000);
const AGENTS = Number(values.agents ?? 500);
const WORKERS = (values.workers ?? `0,${Math.max(1, Math.min(4, availableParallelism() - 1))}`).split(',').map(Number);
if (!Number.isSafeInteger(EVENTS) || !Number.isSafeInteger(AGENTS) || EVENTS < AGENTS * 2 || WORKERS.some((w) => !Number.isSafeInteger(w) || w < 0)) {
  console.error(`bench:audit: bad arguments\n\n${HELP}`);
  process.exit(2);
}

interface Stream {
  state: AgentState;
  last: RecordedEvent[] | undefined;
}

/** One command as the gate decides and records it: signed envelope, decision context, chain link. */
function commit(streamId: string, stream: Stream, type: 'RegisterAgent' | 'ReportHealth', actor: string, key: KeyPair, actorRoles: string[], payload: Record<string, unknown>): EventData[] {
  const envelope = createSignedCommand({ type, actor, payload, secretKey: key.secretKey });
  // The decider sees the payload as the gate parses it (the contract's defaults filled in).
  const parsed = commandByType(type)!.payload.parse(payload);
  const command = { type, payload: parsed, context: { now: envelope.issuedAt, actor, actorRoles, commandId: envelope.commandId } } as unknown as Parameters<typeof agentDecider.decide>[0];
  const events = agentDecider.decide(command, stream.state);
  for (const e of events) stream.state = agentDecider.evolve(stream.state, e);
  const metadata = { commandId: envelope.commandId, commandType: type, actor, issuedAt: envelope.issuedAt, signature: envelope.signature, correlationId: envelope.commandId, payload };
  return toEventData(events, metadata, nextCommitLink(streamId, stream.last), command);
}

/** Writes the log; returns the public keys the audit trusts (the bootstrap operator, the projections service). */
async function writeLog(store: EventStore): Promise<{ root: string; projections: string }> {
  const root = generateKeyPair();
  const projections = generateKeyPair();
  const keys = Array.from({ length: AGENTS }, () => generateKeyPair());
  const streams = Array.from({ length: AGENTS }, (): Stream => ({ state: agentDecider.initialState(), last: undefined }));
  let written = 0;
  /** One commit on each agent's stream, all at once (the store commits them in one write). */
  const wave = async (make: (i: number, agentId: string, stream: Stream) => EventData[]) => {
    await Promise.all(
      streams.map(async (stream, i) => {
        if (written >= EVENTS) return;
        const agentId = `agent${i}`;
        const events = make(i, agentId, stream);
        await store.append(agentStreamId(agentId), events, 'any');
        // The store records exactly these ids, types, data and metadata: the next link is their hash.
        stream.last = events.map((e) => ({ id: e.id!, type: e.type, data: e.data, metadata: e.metadata ?? {} }) as RecordedEvent);
        written += events.length;
      }),
    );
  };
  await wave((i, agentId, stream) =>
    commit(agentStreamId(agentId), stream, 'RegisterAgent', 'root', root, ['operator'], { agentId, publicKey: keys[i]!.publicKey, displayName: agentId, roles: ['executive'], constitutions: [], specializations: [] }),
  );
  for (let n = 0; written < EVENTS; n++) {
    await wave((i, agentId, stream) => commit(agentStreamId(agentId), stream, 'ReportHealth', agentId, keys[i]!, ['executive'], { agentId, health: 0.9, risk: 0.1 + ((n + i) % 7) / 100, tags: [], metrics: {} }));
  }
  // The projections' checkpoint of the whole log, signed with its service key.
  const hasher = new LogHasher();
  for await (const event of store.readAll()) hasher.add(event);
  const head = hasher.current;
  const payload = { count: head.count, position: head.position!, hash: head.hash, algorithm: LOG_HASH_ALGORITHM };
  const envelope = createSignedCommand({ type: 'RecordLogCheckpoint', actor: 'service:projections', payload, secretKey: projections.secretKey, causationId: `log-position:${head.position}` });
  const command = { type: 'RecordLogCheckpoint' as const, payload, context: { now: envelope.issuedAt, actor: 'service:projections', actorRoles: ['service'], commandId: envelope.commandId } };
  const events = logCheckpointDecider.decide(command, logCheckpointDecider.initialState());
  const metadata = { commandId: envelope.commandId, commandType: 'RecordLogCheckpoint', actor: 'service:projections', issuedAt: envelope.issuedAt, signature: envelope.signature, causationId: envelope.causationId!, payload };
  await store.append(AUDIT_LOG_STREAM, toEventData(events, metadata, nextCommitLink(AUDIT_LOG_STREAM, undefined), command), 'no_stream');
  return { root: root.publicKey, projections: projections.publicKey };
}

async function replay(store: EventStore): Promise<{ events: number; ms: number }> {
  const started = performance.now();
  let events = 0;
  for await (const _ of store.readAll()) events++;
  return { events, ms: performance.now() - started };
}

const dir = mkdtempSync(join(tmpdir(), 'agora-bench-audit-'));
try {
  console.log(`bench:audit: writing a log of ${EVENTS} events (${AGENTS} agents, signed health reports) ...`);
  let store = await openEmbeddedEventStore({ directory: dir });
  const writeStarted = performance.now();
  const { root, projections } = await writeLog(store);
  await store.close();
  console.log(`  written in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s\n`);

  // Reopened as the audit finds it: the store reads its file at open, then serves from memory.
  store = await openEmbeddedEventStore({ directory: dir });
  const rows: [string, string, string][] = [];
  const raw = await replay(store);
  rows.push(['raw replay (readAll, nothing checked)', `${raw.events}`, `${Math.round((raw.events * 1000) / raw.ms)}`]);
  for (const workers of WORKERS) {
    const report = await auditLog(store, { trusted: [{ agentId: 'root', publicKey: root, roles: ['operator'] }], serviceKeys: { projections: [{ publicKey: projections }] }, workers });
    if (report.findings.length > 0) throw new Error(`the benchmark log has findings: ${JSON.stringify(report.findings.slice(0, 3))}`);
    rows.push([`agora audit, ${workers} worker thread${workers === 1 ? '' : 's'} for signatures`, `${report.events}`, `${Math.round((report.events * 1000) / report.elapsedMs)}`]);
  }
  await store.close();
  console.log(`machine: ${availableParallelism()} cores, node ${process.version}`);
  console.log('| what | events | events/s |\n| --- | ---: | ---: |');
  for (const [what, events, rate] of rows) console.log(`| ${what} | ${events} | ${rate} |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
