/**
 * `agora audit` on a real log (the registry service and the projections' log checkpoints over an
 * embedded store), then on copies of it with one tampering each: the audit reports exactly that.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, RotateAgentKey, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import { agentDecider, agentStreamId, createAgentDecider } from '@agora/domain-registry';
import { toEventData } from '@agora/eventsourcing';
import { decodeRecords, encodeRecord, openEmbeddedEventStore, type EventData, type RecordedEvent } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, lastCommitOf, nextCommitLink, type KeyPair } from '@agora/identity';
import { startLogCheckpoints } from '@agora/projections';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import type { AuditReport, Finding } from '../src/audit/engine.js';
import { runCli } from '../src/cli.js';

let base: string;
const root = generateKeyPair();
const alice = generateKeyPair();
const aliceNext = generateKeyPair();
const bob = generateKeyPair();

interface CommitRecord {
  s: string;
  r: number;
  t: string;
  e: { i: string; y: string; d: Record<string, unknown>; m: Record<string, unknown> }[];
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'agora-audit-'));
  const context: ServiceContext = await openServiceContext({
    store: { kind: 'embedded', directory: join(base, 'events') },
    natsUrl: undefined,
    dataDir: base,
    operators: [{ agentId: 'root', publicKey: root.publicKey }],
    maxClockSkewMs: 300_000,
    requestTimeoutMs: 5_000,
  });
  const registry = await startRegistryService(context, { logger: false });
  const send = async (type: string, subject: string, actor: string, key: KeyPair, payload: Record<string, unknown>) => {
    const reply: Reply<CommandResult> = await context.client.request(subject, createSignedCommand({ type, actor, payload, secretKey: key.secretKey }), { timeoutMs: 5_000 });
    if (!reply.ok) throw new Error(`${type}: ${reply.error.message}`);
  };
  try {
    await send('RegisterAgent', RegisterAgent.subject, 'root', root, { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['operator'] });
    await send('RegisterAgent', RegisterAgent.subject, 'alice', alice, { agentId: 'bob', publicKey: bob.publicKey, displayName: 'Bob', roles: ['executive'] });
    await send('UpdateAgent', UpdateAgent.subject, 'alice', alice, { agentId: 'bob', displayName: 'Bob the executive' });
    await send('RegisterAgent', RegisterAgent.subject, 'alice', alice, { agentId: 'carol', publicKey: generateKeyPair().publicKey, displayName: 'Carol', roles: ['reviewer'] });
    await send('RotateAgentKey', RotateAgentKey.subject, 'alice', alice, { agentId: 'alice', publicKey: aliceNext.publicKey });
    await send('UpdateAgent', UpdateAgent.subject, 'alice', aliceNext, { agentId: 'carol', displayName: 'Carol the reviewer' });
    await send('UpdateAgent', UpdateAgent.subject, 'alice', aliceNext, { agentId: 'bob', specializations: ['security'] });
    // The projections' checkpoints of the whole log, one at the end.
    const checkpoints = await startLogCheckpoints({ store: context.store, as: context.serviceIdentity('projections'), every: 1_000, intervalMs: 60_000 });
    await checkpoints.caughtUp;
    await checkpoints.checkpoint();
    await checkpoints.close();
  } finally {
    await registry.close();
    await context.close();
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A copy of the log, changed by `tamper` (record by record, as on disk). */
function copyWith(tamper?: (records: CommitRecord[]) => CommitRecord[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'agora-audit-copy-'));
  cpSync(join(base, 'events'), dir, { recursive: true });
  if (tamper) {
    const file = join(dir, 'events.log');
    const { records } = decodeRecords(readFileSync(file));
    writeFileSync(file, Buffer.concat(tamper(structuredClone(records) as CommitRecord[]).map((r) => encodeRecord(r))));
    // The index the store saved at its clean close describes the log before the change: a writer rewriting the log drops it too.
    rmSync(join(dir, 'events.idx'), { force: true });
  }
  return dir;
}

/** Appends a commit to a copy of the log as a privileged writer would, past every command gate. */
async function appendTo(dir: string, streamId: string, events: EventData[]): Promise<void> {
  const store = await openEmbeddedEventStore({ directory: dir });
  try {
    await store.append(streamId, events, 'any');
  } finally {
    await store.close();
  }
}

/** Runs `agora audit --json` on a log directory: exit code, report, progress lines. */
async function audit(dir: string, env: Record<string, string> = {}): Promise<{ code: number; report: AuditReport; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['audit', '--json', '--workers', '0'], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    readStdin: async () => '',
    env: { EVENT_STORE: `embedded:${dir}`, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, AGORA_OPERATOR_ID: 'root', AGORA_SERVICE_KEYS_DIR: join(base, 'service-keys'), AGORA_DATA_DIR: base, ...env },
  });
  return { code, report: JSON.parse(stdout) as AuditReport, stderr };
}

const brief = (findings: readonly Finding[]) => findings.map((f) => ({ check: f.check, streamId: f.streamId, revision: f.revision }));

/** Bob's stream as the log has it (registered, renamed): its state and its last commit. */
async function bobStream(dir: string) {
  const store = await openEmbeddedEventStore({ directory: dir });
  try {
    const events = await store.readStream(agentStreamId('bob'));
    return { state: events.reduce((s, e) => agentDecider.evolve(s, { type: e.type, data: e.data } as never), agentDecider.initialState()), lastCommit: lastCommitOf(events) };
  } finally {
    await store.close();
  }
}

/**
 * A command signed by `key`, decided by the registry's own decider on bob's stream and linked to
 * its last commit, with the metadata a command gate leaves: a forgery as good as a privileged
 * writer can make, past every gate.
 */
async function forgedOnBob(dir: string, actor: string, key: KeyPair, actorRoles: string[], payload: Record<string, unknown>): Promise<EventData[]> {
  const { state, lastCommit } = await bobStream(dir);
  const envelope = createSignedCommand({ type: 'UpdateAgent', actor, payload, secretKey: key.secretKey });
  const command = { type: 'UpdateAgent', payload, context: { now: new Date().toISOString(), actor, actorRoles, commandId: envelope.commandId } } as unknown as Parameters<typeof agentDecider.decide>[0];
  const events = agentDecider.decide(command, state);
  const metadata = { commandId: envelope.commandId, commandType: 'UpdateAgent', actor, issuedAt: envelope.issuedAt, signature: envelope.signature, correlationId: envelope.commandId, payload };
  return toEventData(events, metadata, nextCommitLink(agentStreamId('bob'), lastCommit), command);
}

describe('agora audit', () => {
  it('finds nothing on the log as the services wrote it, and says what it read', async () => {
    const { code, report, stderr } = await audit(copyWith());
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    // Every command that wrote also reserved its commandId (commandid-<id>): 9 commits of the services
    // (the registry's breaker policy recorded at its start among them), 9 reservations.
    expect(report).toMatchObject({ events: 18, commands: 18, checkpoints: { recorded: 1, verified: 1, lastCount: 16 } });
    expect(report.protocols['registry']).toEqual({ events: 7, commands: 7, findings: 0 });
    expect(report.protocols['settings']).toEqual({ events: 1, commands: 1, findings: 0 });
    expect(report.protocols['audit']).toEqual({ events: 1, commands: 1, findings: 0 });
    expect(report.protocols['other']).toEqual({ events: 9, commands: 9, findings: 0 });
    expect(stderr).toMatch(/audit: position 18, 18 events, \d+ events\/s/);
  });

  it('finds an event published straight into the log', async () => {
    const dir = copyWith();
    await appendTo(dir, 'agent-mallory', [{ type: 'AgentRegistered', data: { agentId: 'mallory', publicKey: generateKeyPair().publicKey, displayName: 'M', roles: ['operator'], constitutions: [], specializations: [], trustScore: 500, health: 1, risk: 0 }, metadata: { actor: 'root' } }]);
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([{ check: 'envelope', streamId: 'agent-mallory', revision: 0 }]);
    expect(report.findings[0]!.reason).toMatch(/^unsigned: the metadata carries no signature: not written through a command gate/);
  });

  it("finds an event whose data was edited (the decision and the checkpoint over it)", async () => {
    const dir = copyWith((records) => {
      const bobRegistered = records.find((r) => r.s === 'agent-bob' && r.r === 0)!;
      bobRegistered.e[0]!.d['roles'] = ['operator'];
      return records;
    });
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([
      { check: 'decision', streamId: 'agent-bob', revision: 0 },
      // The next commit of bob's stream links to the edited one.
      { check: 'chain', streamId: 'agent-bob', revision: 1 },
      { check: 'checkpoint', streamId: 'audit-log', revision: 0 },
    ]);
    expect(report.findings[0]!.reason).toBe('decided again, RegisterAgent produces another AgentRegistered: data.roles[0]: "executive" decided again, "operator" in the log');
  });

  it("finds a command id reservation's copy appended to its stream: a one-commit stream keeps nothing, its history is read again", async () => {
    const dir = copyWith();
    const store = await openEmbeddedEventStore({ directory: dir });
    let reservation: RecordedEvent | undefined;
    try {
      for await (const e of store.readAll()) if (!reservation && e.streamId.startsWith('commandid-')) reservation = e;
    } finally {
      await store.close();
    }
    // The same signed metadata (its link the genesis value again), as a second commit of the stream.
    await appendTo(dir, reservation!.streamId, [{ type: reservation!.type, data: reservation!.data, metadata: reservation!.metadata }]);
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([{ check: 'chain', streamId: reservation!.streamId, revision: 1 }]);
    expect(report.findings[0]!.reason).toMatch(/^prevCommitHash does not match the stream's previous commit \(revision 0\)/);
  });

  it('finds an event removed from the middle of a stream', async () => {
    // bob's rename (agent-bob@1) goes; his registration and his later update stay.
    const dir = copyWith((records) => records.filter((r) => !(r.s === 'agent-bob' && r.r === 1)));
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([
      // The revision after the gap, and its link to a commit that is no longer the one before it.
      { check: 'chain', streamId: 'agent-bob', revision: 2 },
      { check: 'chain', streamId: 'agent-bob', revision: 2 },
      { check: 'checkpoint', streamId: 'audit-log', revision: 0 },
    ]);
  });

  it('finds a tail truncated: the last event of a stream cut off before the last checkpoint', async () => {
    // carol's last event (her rename) goes: her stream still reads as whole.
    const dir = copyWith((records) => records.filter((r) => !(r.s === 'agent-carol' && r.r === 1)));
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([{ check: 'checkpoint', streamId: 'audit-log', revision: 0 }]);
    expect(report.findings[0]!.reason).toMatch(/hash over its first 16 events is [0-9a-f]{64}, the checkpoint recorded [0-9a-f]{64}: an event up to position 16 was edited, removed or inserted/);
  });

  it('finds a signature by a rotated-out key', async () => {
    const dir = copyWith();
    await appendTo(dir, 'agent-bob', await forgedOnBob(dir, 'alice', alice, ['operator'], { agentId: 'bob', displayName: 'Bob (renamed with an old key)' }));
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([{ check: 'signature', streamId: 'agent-bob', revision: 3 }]);
    expect(report.findings[0]!.reason).toBe(`signed by a key of alice that is not in force at this point of the log (rotated out or expired): ${alice.publicKey}`);
  });

  it("reports a registry entry that shadows the bootstrap operator, as an older log may hold it; under today's rules its decision too", async () => {
    const shadowing = async (rules: number) => {
      const dir = copyWith();
      const payload = { agentId: 'root', publicKey: aliceNext.publicKey, displayName: 'root', roles: ['operator'], constitutions: [], specializations: [], trustScore: 500, health: 1, risk: 0 };
      const envelope = createSignedCommand({ type: 'RegisterAgent', actor: 'alice', payload, secretKey: aliceNext.secretKey });
      const command = { type: 'RegisterAgent', payload, context: { now: new Date().toISOString(), actor: 'alice', actorRoles: ['operator'], commandId: envelope.commandId, rules } } as unknown as Parameters<typeof agentDecider.decide>[0];
      // Decided as a registry that knew no reserved bootstrap id did (rules 3 and before).
      const events = createAgentDecider(undefined, {}).decide({ ...command, context: { ...command.context, rules: 3 } }, agentDecider.initialState());
      const metadata = { commandId: envelope.commandId, commandType: 'RegisterAgent', actor: 'alice', issuedAt: envelope.issuedAt, signature: envelope.signature, correlationId: envelope.commandId, payload };
      await appendTo(dir, agentStreamId('root'), toEventData(events, metadata, nextCommitLink(agentStreamId('root'), undefined), command));
      return audit(dir);
    };
    const older = await shadowing(3);
    expect(older.code).toBe(1);
    expect(brief(older.report.findings)).toEqual([{ check: 'authorization', streamId: 'agent-root', revision: 0 }]);
    expect(older.report.findings[0]!.reason).toBe("alice put a registry entry under the bootstrap operator's id root with another key than the configured one: it shadows the bootstrap operator, whose configured key no longer signs");
    const today = await shadowing(4);
    expect(brief(today.report.findings).sort((a, b) => a.check.localeCompare(b.check))).toEqual([
      { check: 'authorization', streamId: 'agent-root', revision: 0 },
      { check: 'decision', streamId: 'agent-root', revision: 0 },
    ]);
  });

  it('finds a command from an actor without the role', async () => {
    const dir = copyWith();
    await appendTo(dir, 'agent-bob', await forgedOnBob(dir, 'bob', bob, ['executive'], { agentId: 'bob', roles: ['operator'] }));
    const { code, report } = await audit(dir);
    expect(code).toBe(1);
    expect(brief(report.findings)).toEqual([{ check: 'authorization', streamId: 'agent-bob', revision: 3 }]);
    expect(report.findings[0]!.reason).toBe('UpdateAgent needs one of the roles operator; bob has executive (at this point of the log)');
  });

  it("reports a checkpoint signed by a service key no longer in force, or by a key that is not the service's", async () => {
    const dir = copyWith();
    const projections = JSON.parse(readFileSync(join(base, 'service-keys', 'projections.key.json'), 'utf8')) as { publicKey: string };
    // The registry's key as it is (it signed the breaker policy it recorded at its start).
    const { publicKey: registry } = JSON.parse(readFileSync(join(base, 'service-keys', 'registry.key.json'), 'utf8')) as { publicKey: string };
    // Rotated out before the checkpoint was signed.
    const rotated = JSON.stringify({ registry, projections: [{ publicKey: projections.publicKey, until: '2000-01-01T00:00:00Z' }, { publicKey: generateKeyPair().publicKey, from: '2000-01-01T00:00:00Z' }] });
    const expired = await audit(dir, { AGORA_SERVICE_PUBLIC_KEYS: rotated });
    expect(expired.code).toBe(1);
    // The checkpoint command's commandid reservation carries the same signature, and is reported with it.
    expect(brief(expired.report.findings)).toEqual([{ check: 'signature', streamId: expect.stringMatching(/^commandid-/), revision: 0 }, { check: 'signature', streamId: 'audit-log', revision: 0 }]);
    expect(expired.report.findings[1]!.reason).toMatch(/^signed by a key of service:projections that is not in force at this point of the log \(rotated out or expired\): ed25519:/);
    expect(expired.report.findings[1]!.reason.endsWith(projections.publicKey)).toBe(true);
    // Verifiers know another key for the projections service: the checkpoint does not verify.
    const unknown = await audit(dir, { AGORA_SERVICE_PUBLIC_KEYS: JSON.stringify({ registry, projections: generateKeyPair().publicKey }) });
    // The checkpoint command's commandid reservation carries the same signature, and is reported with it.
    expect(brief(unknown.report.findings)).toEqual([{ check: 'signature', streamId: expect.stringMatching(/^commandid-/), revision: 0 }, { check: 'signature', streamId: 'audit-log', revision: 0 }]);
    expect(unknown.report.findings[1]!.reason).toMatch(/^the signature of service:projections on RecordLogCheckpoint \S+ does not verify under its key at this point of the log$/);
  });

  it('says so when the log it was pointed at is empty', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agora-audit-empty-'));
    try {
      const { code, report, stderr } = await audit(empty);
      expect(code).toBe(0);
      expect(report.events).toBe(0);
      expect(stderr).toMatch(/holds no events: is EVENT_STORE the log you mean\?/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
