/**
 * `agora audit --follow` and `--state` on a real log (the registry service over an embedded store):
 * a new commit is verified within a second of being stored, a commit published straight into the
 * log is found as it lands, and an audit resumes from its signed state, refusing a log whose past
 * was rewritten since.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import { decodeRecords, encodeRecord, openEmbeddedEventStore, StoreUnavailable, type EventStore } from '@agora/eventstore';
import { createSignedCommand, generateKeyPair, parseServiceKeyring, type KeyPair } from '@agora/identity';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { LogAuditor, type AuditOptions, type AuditReport, type Finding } from '../src/audit/engine.js';
import { serveAuditMetrics } from '../src/audit/metrics.js';
import { readAuditState, writeAuditState, type AuditState } from '../src/audit/state.js';
import { freePort, startNatsServer } from '@agora/testing';
import { runCli } from '../src/cli.js';
import { openAuditedStore } from '../src/audit/settings.js';

const PROMTOOL = process.env['PROMTOOL_BIN'] ?? '/usr/bin/promtool';
const root = generateKeyPair();
const alice = generateKeyPair();
const auditorKey = generateKeyPair();
const trusted = [{ agentId: 'root', publicKey: root.publicKey, roles: ['operator'] }];
let base: string;

/** A log written by the registry service (alice and bob registered), kept open: its store and a way to send commands. */
async function registryLog(directory: string) {
  const context: ServiceContext = await openServiceContext({ store: { kind: 'embedded', directory }, natsUrl: undefined, dataDir: `${directory}-data`, operators: [{ agentId: 'root', publicKey: root.publicKey }], maxClockSkewMs: 300_000, requestTimeoutMs: 5_000 });
  const registry = await startRegistryService(context, { logger: false });
  const send = async (type: string, subject: string, actor: string, key: KeyPair, payload: Record<string, unknown>) => {
    const reply: Reply<CommandResult> = await context.client.request(subject, createSignedCommand({ type, actor, payload, secretKey: key.secretKey }), { timeoutMs: 5_000 });
    if (!reply.ok) throw new Error(`${type}: ${reply.error.message}`);
  };
  await send('RegisterAgent', RegisterAgent.subject, 'root', root, { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['operator'] });
  await send('RegisterAgent', RegisterAgent.subject, 'alice', alice, { agentId: 'bob', publicKey: generateKeyPair().publicKey, displayName: 'Bob', roles: ['executive'] });
  // The registry signs the breaker policy it records at its start: its key is the audit's.
  const serviceKeys = parseServiceKeyring({ registry: context.serviceIdentity('registry').publicKey });
  return { store: context.store, send, serviceKeys, close: async () => (await registry.close(), await context.close()) };
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'agora-audit-follow-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Runs a following audit on `store` until `until` says so (or 10 s): what it found, and when it had verified each count of events. */
function follow(store: EventStore, options: AuditOptions = {}) {
  const stop = new AbortController();
  const findings: { finding: Finding; at: number }[] = [];
  const settled: { count: number; at: number }[] = [];
  const auditor = new LogAuditor({ trusted, ...options, signal: stop.signal, onFinding: (finding) => (findings.push({ finding, at: Date.now() }), options.onFinding?.(finding)), follow: { onSettled: (a) => settled.push({ count: a.at.count, at: Date.now() }) } });
  const running = auditor.run(store);
  const waitFor = async <T>(what: () => T | undefined, timeoutMs = 5_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = what();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return { auditor, findings, settled, waitFor, stop: async (): Promise<AuditReport> => (stop.abort(), running) };
}

/** The events count of the log now. */
async function countOf(store: EventStore): Promise<number> {
  let n = 0;
  for await (const _ of store.readAll()) n++;
  return n;
}

describe('agora audit --follow', () => {
  it('verifies a new commit within a second of its being stored, and finds a commit published straight into the log as it lands', async () => {
    const log = await registryLog(join(base, 'followed'));
    const { store, send, serviceKeys } = log;
    const served: { metrics?: Awaited<ReturnType<typeof serveAuditMetrics>> } = {};
    const run = follow(store, { serviceKeys, onFinding: (finding) => served.metrics?.finding(finding) });
    const metrics = (served.metrics = await serveAuditMetrics(store, () => run.auditor.at, { port: 0, host: '127.0.0.1' }));
    const scrape = async () => {
      const text = await (await fetch(metrics.url)).text();
      return (name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    const before = await countOf(store);
    await run.waitFor(() => run.settled.find((s) => s.count === before));
    let value = await scrape();
    expect([value('agora_audit_verified_position_events'), value('agora_audit_events_verified_total'), value('agora_audit_lag_events'), value('agora_audit_lag_seconds'), value('agora_audit_caught_up')]).toEqual([before, before, 0, 0, 1]);
    if (existsSync(PROMTOOL)) {
      // Nothing to lint in ours (prom-client's own nodejs_active_*_total gauges are promtool's only complaint).
      const lint = spawnSync(PROMTOOL, ['check', 'metrics'], { input: await (await fetch(metrics.url)).text(), encoding: 'utf8' });
      expect(`${lint.stdout}${lint.stderr}`.split('\n').filter((line) => line.startsWith('agora_'))).toEqual([]);
    }

    await send('UpdateAgent', UpdateAgent.subject, 'alice', alice, { agentId: 'bob', displayName: 'Bob the executive' });
    const stored = (await store.readStream('agent-bob')).at(-1)!;
    const verified = await run.waitFor(() => run.settled.find((s) => s.count === before + 2)); // the commit and its command id reservation
    expect(verified.at - Date.parse(stored.recordedAt)).toBeLessThan(1_000);
    expect(run.findings).toEqual([]);

    // Past every gate: no envelope, no signature.
    const forgedAt = Date.now();
    await store.append('agent-bob', [{ id: randomUUID(), type: 'AgentUpdated', data: { agentId: 'bob', displayName: 'Mallory', updatedAt: new Date().toISOString() }, metadata: {} }], 'any');
    const found = await run.waitFor(() => run.findings[0]);
    expect(found.at - forgedAt).toBeLessThan(1_000);
    expect(found.finding).toMatchObject({ check: 'envelope', streamId: 'agent-bob', revision: 2 });

    const report = await run.stop();
    expect(report.findings.map((f) => f.check)).toEqual(['envelope']);
    expect(report.events).toBe(before + 3);
    value = await scrape();
    expect([value('agora_audit_findings_total{check="envelope"}'), value('agora_audit_findings_total{check="signature"}'), value('agora_audit_verified_position_events'), value('agora_audit_lag_events'), value('agora_audit_caught_up')]).toEqual([1, 0, before + 3, 0, 0]);
    // Stopped, and the log goes on: the audit is behind by what follows (a commit and its reservation).
    await send('UpdateAgent', UpdateAgent.subject, 'alice', alice, { agentId: 'bob', displayName: 'Bob, later' });
    value = await scrape();
    expect(value('agora_audit_lag_events')).toBe(2);
    expect(value('agora_audit_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value('agora_audit_lag_seconds')).toBeLessThan(60);
    await metrics.close();
    await log.close();
  });
  it("keeps following while the store cannot say where the log ends (a partition): the commit is verified once it can", async () => {
    const log = await registryLog(join(base, 'unsure'));
    let unsure = 0;
    const store = new Proxy(log.store, {
      get(target, property) {
        if (property === 'headPosition') return () => (unsure > 0 ? (unsure--, Promise.reject(new StoreUnavailable('jetstream: head position: timeout'))) : target.headPosition());
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const run = follow(store, { serviceKeys: log.serviceKeys });
    const before = await countOf(log.store);
    await run.waitFor(() => run.settled.find((s) => s.count === before));
    unsure = 2;
    await log.send('UpdateAgent', UpdateAgent.subject, 'alice', alice, { agentId: 'bob', displayName: 'Bob, unsure' });
    await run.waitFor(() => run.settled.find((s) => s.count === before + 2));
    expect(unsure).toBe(0);
    const report = await run.stop();
    expect(report.findings).toEqual([]);
    await log.close();
  });

  it('waits at start for a store it cannot reach yet (a partition, a server restarting), and fails at once without --follow', async () => {
    const port = await freePort();
    const env = { EVENT_STORE: `jetstream://127.0.0.1:${port}`, AGORA_DATA_DIR: join(base, 'unreachable') };
    await expect(openAuditedStore(env)).rejects.toBeInstanceOf(StoreUnavailable);
    const said: string[] = [];
    const opening = openAuditedStore(env, { waitMs: 30_000, say: (line) => void said.push(line) });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const server = await startNatsServer({ port });
    try {
      const opened = await opening;
      expect(opened.description).toContain(String(port));
      expect(said.length).toBeGreaterThan(0);
      expect(said[0]).toMatch(/is unavailable .*trying again in 2 s, for up to 30 s/);
      await opened.store.close();
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('--exit-on-finding stops at the first finding with exit code 1 (here in the pass: the log above holds the forged commit)', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['audit', '--follow', '--exit-on-finding', '--workers', '0'], {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      readStdin: async () => '',
      env: { EVENT_STORE: `embedded:${join(base, 'followed')}`, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, AGORA_OPERATOR_ID: 'root', AGORA_DATA_DIR: join(base, 'followed-data'), METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' },
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(stdout).toMatch(/^finding: agent-bob@2 \(position \S+, AgentUpdated\) envelope: /m);
    expect(stdout).toContain('1 finding:');
  });
});

describe('agora audit --state', () => {
  let log: Awaited<ReturnType<typeof registryLog>>;
  let statePath: string;
  let state: AuditState;
  let verifiedEvents: number;

  beforeAll(async () => {
    log = await registryLog(join(base, 'resumed'));
    await log.send('RegisterAgent', RegisterAgent.subject, 'alice', alice, { agentId: 'carol', publicKey: generateKeyPair().publicKey, displayName: 'Carol', roles: ['reviewer'] });
    statePath = join(base, 'audit-state.json');
    const auditor = new LogAuditor({ trusted, serviceKeys: log.serviceKeys });
    const report = await auditor.run(log.store);
    expect(report.findings).toEqual([]);
    verifiedEvents = report.events;
    state = writeAuditState(statePath, { store: 'test', ...auditor.snapshot() }, auditorKey);
    // After the state: bob's stream continues (its past is read again, and checked, on resume), erin's begins.
    await log.send('UpdateAgent', UpdateAgent.subject, 'alice', alice, { agentId: 'bob', displayName: 'Bob the executive' });
    await log.send('RegisterAgent', RegisterAgent.subject, 'alice', alice, { agentId: 'erin', publicKey: generateKeyPair().publicKey, displayName: 'Erin', roles: ['reviewer'] });
    await log.close();
  });

  it('is small, signed by the auditor, keeps no hash for one-commit streams, and is refused when changed or signed by another key', () => {
    expect(readFileSync(statePath, 'utf8').length).toBeLessThan(4_000);
    expect(state.streams.map(([s]) => s).sort()).toEqual(['agent-alice', 'agent-bob', 'agent-carol', 'settings-breaker']);
    // The settings in force at the position: the breaker policy the registry recorded at its start.
    expect(Object.keys(state.settings)).toEqual(['breaker']);
    expect(state.keyring.map(([id]) => id).sort()).toEqual(['alice', 'bob', 'carol']);
    expect(readAuditState(statePath, auditorKey.publicKey)).toEqual(state);
    expect(readAuditState(join(base, 'none.json'), auditorKey.publicKey)).toBeUndefined();
    expect(() => readAuditState(statePath, generateKeyPair().publicKey)).toThrow(/not by the auditor's key/);
    const changed = join(base, 'changed.json');
    writeFileSync(changed, readFileSync(statePath, 'utf8').replace(`"events":${state.events}`, `"events":${state.events + 1}`));
    expect(() => readAuditState(changed, auditorKey.publicKey)).toThrow(/does not verify/);
  });

  /** Resumes the audit from the state on a copy of the log, changed by `tamper` (record by record, as on disk). */
  async function resumeOn(tamper?: (records: Record<string, unknown>[]) => void): Promise<AuditReport> {
    const copy = mkdtempSync(join(tmpdir(), 'agora-audit-resume-'));
    cpSync(join(base, 'resumed'), copy, { recursive: true });
    if (tamper) {
      const file = join(copy, 'events.log');
      const { records } = decodeRecords(readFileSync(file));
      const changed = structuredClone(records) as Record<string, unknown>[];
      tamper(changed);
      writeFileSync(file, Buffer.concat(changed.map((r) => encodeRecord(r as never))));
      rmSync(join(copy, 'events.idx'), { force: true });
    }
    const store = await openEmbeddedEventStore({ directory: copy });
    try {
      return await new LogAuditor({ trusted, serviceKeys: log.serviceKeys, resume: readAuditState(statePath, auditorKey.publicKey)! }).run(store);
    } finally {
      await store.close();
      rmSync(copy, { recursive: true, force: true });
    }
  }

  type Rec = { s: string; e: { d: Record<string, unknown> }[] };

  it('resumes where it stopped: reads only what follows, and it audits clean', async () => {
    const report = await resumeOn();
    expect(report.findings).toEqual([]);
    expect(report.resumed).toEqual({ position: state.log.position, events: verifiedEvents, findings: 0 });
    // bob's update and erin's registration, each with its command id reservation.
    expect(report.events).toBe(verifiedEvents + 4);
  });

  it('refuses a log whose last verified event was rewritten: a continuation finding, and nothing more read', async () => {
    const report = await resumeOn((records) => {
      const last = records[verifiedEvents - 1] as unknown as Rec;
      last.e[0]!.d['rewritten'] = true;
    });
    expect(report.findings.map((f) => f.check)).toEqual(['continuation']);
    expect(report.findings[0]!.reason).toMatch(/is not the one verified/);
    expect(report.events).toBe(verifiedEvents);
  });

  it("finds a stream whose past was rewritten when it continues after the state", async () => {
    const report = await resumeOn((records) => {
      const bob = (records as unknown as Rec[]).find((r) => r.s === 'agent-bob')!;
      bob.e[0]!.d['displayName'] = 'Bobby';
    });
    expect(report.findings.find((f) => f.check === 'continuation')).toMatchObject({ streamId: 'agent-bob', revision: 1 });
    expect(report.findings.find((f) => f.check === 'continuation')!.reason).toMatch(/past was rewritten since the audit verified it: its commit at revision 0 is not the one/);
  });

  /** The resumed log, whose read of bob's history (on resume, as his stream continues after the state) fails with `failure` the first `times` times. */
  async function withFailingHistory(failure: () => Error, times: number, work: (store: EventStore) => Promise<void>): Promise<void> {
    const copy = mkdtempSync(join(tmpdir(), 'agora-audit-broken-'));
    cpSync(join(base, 'resumed'), copy, { recursive: true });
    const store = await openEmbeddedEventStore({ directory: copy });
    let failures = 0;
    const failing = new Proxy(store, {
      get(target, property) {
        if (property === 'readStream') {
          return (streamId: string, options?: Parameters<EventStore['readStream']>[1]) => (streamId === 'agent-bob' && failures++ < times ? Promise.reject(failure()) : target.readStream(streamId, options));
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      await work(failing);
    } finally {
      await store.close();
      rmSync(copy, { recursive: true, force: true });
    }
  }

  it('rides out a read of the log that fails mid-commit while the store is unavailable (a partition): tried again, and nothing found', async () => {
    await withFailingHistory(() => new StoreUnavailable('jetstream: timeout'), 3, async (store) => {
      const report = await new LogAuditor({ trusted, serviceKeys: log.serviceKeys, resume: state }).run(store);
      expect(report.findings).toEqual([]);
      expect(report.events).toBe(verifiedEvents + 4);
    });
  });

  it('takes no state after a read of the log that failed mid-commit for good, and a resume from the state before audits clean', async () => {
    // Unavailable for longer than the audit waits (here not at all), or another failure: the audit stops on it.
    await withFailingHistory(() => new StoreUnavailable('jetstream: timeout'), 1, async (store) => {
      const broken = new LogAuditor({ trusted, serviceKeys: log.serviceKeys, resume: state, unavailableWaitMs: 0 });
      await expect(broken.run(store)).rejects.toThrow(/jetstream: timeout/);
      // Its hash has passed bob's commit, which was never checked: a state taken now would claim it.
      expect(broken.failed).toBe(true);
      expect(() => broken.snapshot()).toThrow(/no audit state is taken after a failed step/);
      const again = await new LogAuditor({ trusted, serviceKeys: log.serviceKeys, resume: state }).run(store);
      expect(again.findings).toEqual([]);
      expect(again.events).toBe(verifiedEvents + 4);
    });
  });

  it('from the command line: the first run writes the state, the next resumes from it (the key from AGORA_AUDIT_KEY_FILE); --state without a key is a usage error', async () => {
    const keyFile = join(base, 'auditor.key.json');
    writeFileSync(keyFile, JSON.stringify({ agentId: 'auditor', ...auditorKey }));
    const cliState = join(base, 'cli-state.json');
    const audit = async (args: string[], env: Record<string, string> = {}) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(['audit', '--workers', '0', ...args], {
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        readStdin: async () => '',
        env: { EVENT_STORE: `embedded:${join(base, 'resumed')}`, AGORA_OPERATOR_PUBLIC_KEY: root.publicKey, AGORA_OPERATOR_ID: 'root', AGORA_DATA_DIR: join(base, 'resumed-data'), ...env },
      });
      return { code, stdout, stderr };
    };
    const first = await audit(['--json', '--state', cliState, '--key', keyFile]);
    expect(first.code).toBe(0);
    const firstReport = JSON.parse(first.stdout) as AuditReport;
    expect(firstReport.resumed).toBeUndefined();
    expect(firstReport.events).toBe(verifiedEvents + 4);
    expect(readAuditState(cliState, auditorKey.publicKey)!.events).toBe(verifiedEvents + 4);

    const second = await audit(['--state', cliState], { AGORA_AUDIT_KEY_FILE: keyFile });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`resumed after position \\S+ \\(${verifiedEvents + 4} events verified before, 0 findings then\\): 0 events read`));

    const noKey = await audit(['--state', cliState]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--state needs the auditor's key");
  });
});
