/**
 * The audit decides each command under the settings in force at its position in the log, never
 * under the auditor's environment: the proposal service records the tribunal policy it starts with
 * (settings-tribunal), a restart with another policy records the change, and the audit, given no
 * policy at all, decides every SubmitProposal under the one recorded before it. A replica that
 * decided under a value the log had already replaced is a finding.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, settingsStreamId, type Role } from '@agora/contracts';
import { DEFAULT_TRIBUNAL_POLICY, defineTribunalPolicy } from '@agora/domain-tribunal';
import { settingsDecider, settingsDigest } from '@agora/eventsourcing';
import { generateKeyPair, parseServiceKeyring, type KeyPair } from '@agora/identity';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { issueInternalCommand, openServiceContext, type Running, type ServiceContext } from '@agora/runtime';
import { agentsOn, embeddedAgora, waitFor } from '@agora/testing';
import { auditLog, LogAuditor } from '../src/audit/engine.js';

/** The README's tribunal demo policy: a proposal may ask for a round of seconds. */
const SHORT_ROUNDS = defineTribunalPolicy({ minRoundDeadlineMs: 1000 });
const FLEET: Record<string, Role[]> = { seldon: ['executive'] };
const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

let dir: string;
let context: ServiceContext;
let registry: Running;
let proposal: (Running & { service: { id: string } }) | undefined;

const agents = agentsOn(() => context.client, keys);
const submit = (proposalId: string, extra: Record<string, unknown> = {}) =>
  agents.send('seldon', 'SubmitProposal', { proposalId, title: `Plan ${proposalId}`, body: 'Week 1: bounties.', problem: 'users', evidence: [{ ref: 'thread/1', summary: 'context' }], ...extra });
const startProposal = async (policy?: typeof SHORT_ROUNDS) => {
  await proposal?.close();
  proposal = await startProposalService(context, { logger: false, ...(policy ? { policy } : {}) });
  return proposal;
};
/** An auditor with no policy of its own: only the operator's key and the services' keys. */
const audit = () => {
  const serviceKeys = parseServiceKeyring({ registry: context.serviceIdentity('registry').publicKey, proposal: context.serviceIdentity('proposal').publicKey });
  const options = { trusted: [{ agentId: 'root', publicKey: keys['root']!.publicKey, roles: ['operator'] }], serviceKeys };
  return { report: auditLog(context.store, options), auditor: new LogAuditor(options) };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-audit-settings-'));
  context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey }));
  registry = await startRegistryService(context, { logger: false });
  for (const [agentId, roles] of Object.entries(FLEET)) {
    await agents.ok('root', RegisterAgent, { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles, constitutions: [], trustScore: 700 });
  }
  await waitFor(() => context.registry.list().length === Object.keys(FLEET).length, 'the agent directory to know the fleet');
}, 30_000);

afterAll(async () => {
  await proposal?.close();
  await registry?.close();
  await context?.close();
  await rm(dir, { recursive: true, force: true });
});

it('records the policy a service starts with once, and again only when it changes (back to an earlier value included)', async () => {
  const first = await startProposal(SHORT_ROUNDS);
  expect(first.lines).toContainEqual(expect.stringMatching(/^tribunal settings [0-9a-f]{16}: recorded in settings-tribunal$/));
  expect((await startProposal(SHORT_ROUNDS)).lines).toContainEqual(expect.stringMatching(/as the log holds them/));
  const stream = await context.store.readStream(settingsStreamId('tribunal'));
  expect(stream.map((e) => [e.type, e.metadata['actor']])).toEqual([['SettingsRecorded', 'service:proposal']]);
  expect(stream[0]!.data).toMatchObject({ name: 'tribunal', settings: SHORT_ROUNDS });
  // The registry recorded its breaker policy at its start.
  expect((await context.store.readStream(settingsStreamId('breaker'))).length).toBe(1);
});

it('a policy changed between two decisions: each audits clean under its own, with no policy given to the auditor', async () => {
  await startProposal(SHORT_ROUNDS);
  // Under the demo's policy a proposal may ask for a 5 s round.
  expect((await submit('short', { reviewDeadlineMs: 5000 })).ok).toBe(true);
  // The operator restarts the service with the default policy: recorded, and it refuses the same request now.
  expect((await startProposal()).lines).toContainEqual(expect.stringMatching(/recorded in settings-tribunal, replacing/));
  expect((await submit('long')).ok).toBe(true);
  const refused = await submit('short-again', { reviewDeadlineMs: 5000 });
  expect(refused.ok).toBe(false);

  const { report, auditor } = audit();
  const found = await report;
  expect(found.findings).toEqual([]);
  expect(found.protocols['tribunal']?.commands).toBeGreaterThanOrEqual(2);
  expect(found.protocols['settings']?.commands).toBe(3); // breaker, tribunal, tribunal again
  await auditor.run(context.store);
  expect(auditor.settingsInForce.tribunal?.digest).toBe(settingsDigest(DEFAULT_TRIBUNAL_POLICY));
});

it('a command decided under a value the log had already replaced (a replica started before the change) is a finding', async () => {
  // This replica runs with the demo's policy (recorded again: back to an earlier value)...
  await startProposal(SHORT_ROUNDS);
  // ...when another replica records the default policy: one that started at the same moment, each
  // asking for running replicas before the other answered (the start check cannot see it).
  const recorded = await issueInternalCommand(
    { streamId: settingsStreamId('tribunal'), decider: settingsDecider, type: 'RecordSettings', payload: { name: 'tribunal', settings: DEFAULT_TRIBUNAL_POLICY } },
    { store: context.store, as: context.serviceIdentity('proposal'), commandId: 'a-simultaneous-start', now: new Date().toISOString() },
  );
  expect(recorded.events).toHaveLength(1);
  // The stale replica still accepts a 5 s round: the log's policy refuses it.
  expect((await submit('stale', { reviewDeadlineMs: 5000 })).ok).toBe(true);

  const found = await audit().report;
  expect(found.findings).toEqual([
    expect.objectContaining({ check: 'decision', streamId: 'proposal-stale', eventType: 'ProposalSubmitted', reason: expect.stringMatching(/SubmitProposal is refused: reviewDeadlineMs 5000 is outside what the tribunal policy allows: 3600000 to/) }),
  ]);
});

it('a replica started with other settings than the running one fails to start, naming both, and records nothing', async () => {
  await startProposal(SHORT_ROUNDS);
  const before = (await context.store.readStream(settingsStreamId('tribunal'))).length;
  await expect(startProposalService(context, { logger: false })).rejects.toThrow(
    `another proposal replica (${proposal!.service.id}) runs with the tribunal settings ${settingsDigest(SHORT_ROUNDS)}, this one was started with ${settingsDigest(DEFAULT_TRIBUNAL_POLICY)}`,
  );
  expect((await context.store.readStream(settingsStreamId('tribunal'))).length).toBe(before);
  // The same value joins.
  const same = await startProposalService(context, { logger: false, policy: SHORT_ROUNDS });
  await same.close();
});
