/**
 * A log written by an earlier release stays readable. Every folder under tools/ci/frozen-logs/ holds
 * a log a past release wrote (its events, the keys that signed them, a README saying what it holds)
 * and an expected.json putting that README in checkable form. For each, as a user would: copy it,
 * audit it with `agora audit` (exit 0, the README's counts), start Agora on it in one process (no
 * checkpoint in the copy: every read model is rebuilt from the log) and read what its README says;
 * then act on top of it with the old fleet's own keys (an executive submits and revises a proposal
 * through two tribunal rounds, validators vote a deploy through), and audit again: still clean.
 * A log that a model-backed fleet wrote also names, in expected.json, each caller's model calls and budget
 * and the total spent, as the audit attributes them. A release that changes an event's shape adds its
 * own frozen log beside the others.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventByType, type ProposalView, type Reply, type VotingSessionView } from '@agora/contracts';
import { createSignedCommand, parseKeyFile, type KeyPair } from '@agora/identity';
import { REPO_ROOT, runToCompletion, startAgoraProcess, waitFor, type AgoraProcess } from '@agora/testing';

const FROZEN = join(REPO_ROOT, 'tools/ci/frozen-logs');

interface Expected {
  /** Settings the release ran under that the log does not record (a policy), given to the audit and to Agora. */
  environment?: Record<string, string>;
  /** Events per protocol, as `agora audit` counts them. */
  audit: Record<string, number>;
  /** Caller -> its budget and how many model calls the audit attributes to it (a log with model calls). */
  modelCalls?: Record<string, { budget: string; calls: number }>;
  /** What those calls cost in all, in USD. */
  spentUsd?: number;
  /** Gateway read path -> the fields its answer must hold. */
  readModels: Record<string, Record<string, unknown>>;
  /** The old fleet's agents that act on top of the log (their keys are in `keys`, default demo-keys/). */
  fleet: { keys?: string; executive: string; reviewers: Record<string, string>; requester: string };
}

interface AuditSummary {
  events: number;
  protocols: Record<string, { events: number; findings: number }>;
  findings: unknown[];
  modelCalls: { caller: string; budget: string; calls: number; open: number; interrupted: number; spent: number }[];
}

const logs = readdirSync(FROZEN, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe.each(logs)('the frozen log %s (e2e)', (name) => {
  const expected = JSON.parse(readFileSync(join(FROZEN, name, 'expected.json'), 'utf8')) as Expected;
  let dir: string;
  let agora: AgoraProcess | undefined;
  let url: string;

  const env = () => ({ ...expected.environment, AGORA_DATA_DIR: dir, AGORA_OPERATOR_KEY_FILE: join(dir, 'operator.key.json') });
  const audit = async (): Promise<{ code: number | null; report: AuditSummary }> => {
    const run = await runToCompletion('apps/cli/src/main.ts', ['audit', '--json', '--workers', '1'], env(), 120_000);
    if (!run.stdout.trim()) throw new Error(`agora audit printed no report (exit ${run.code}):\n${run.stderr}`);
    return { code: run.code, report: JSON.parse(run.stdout) as AuditSummary };
  };
  const keys = new Map<string, KeyPair>();
  const keyOf = (agentId: string) => {
    let key = keys.get(agentId);
    if (!key) keys.set(agentId, (key = parseKeyFile(readFileSync(join(dir, expected.fleet.keys ?? 'demo-keys', `${agentId}.key.json`), 'utf8'))));
    return key;
  };
  const must = async (agentId: string, type: string, payload: Record<string, unknown>) => {
    const envelope = createSignedCommand({ type, actor: agentId, payload, secretKey: keyOf(agentId).secretKey });
    const reply = (await (await fetch(`${url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) })).json()) as Reply;
    if (!reply.ok) throw new Error(`${agentId} ${type}: ${reply.error.code} ${reply.error.message}`);
    return reply.result;
  };
  const query = async <T>(path: string): Promise<T | undefined> => {
    const reply = (await (await fetch(`${url}${path}`)).json()) as Reply<T>;
    return reply.ok ? reply.result : undefined;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `agora-frozen-${name}-`));
    await cp(join(FROZEN, name), dir, { recursive: true });
  });

  afterAll(async () => {
    await agora?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('agora audit verifies the log as written: exit 0, no findings, the events its README counts', async () => {
    const { code, report } = await audit();
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    expect(Object.fromEntries(Object.entries(report.protocols).map(([protocol, s]) => [protocol, s.events]))).toEqual(expected.audit);
    // Every model call attributed to its caller and budget, none left open or interrupted, what they cost in all.
    expect(Object.fromEntries(report.modelCalls.map(({ caller, budget, calls }) => [caller, { budget, calls }]))).toEqual(expected.modelCalls ?? {});
    expect(report.modelCalls.filter((m) => m.open > 0 || m.interrupted > 0)).toEqual([]);
    expect(Number(report.modelCalls.reduce((sum, m) => sum + m.spent, 0).toFixed(6))).toBe(expected.spentUsd ?? 0);
  }, 150_000);

  it('Agora started on it rebuilds every read model from the log, and they hold what its README says', async () => {
    agora = await startAgoraProcess('apps/standalone/src/main.ts', 'agora', { ...env(), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' }, 120_000);
    url = /gateway listening on (http:\/\/[^\s]+) /.exec(agora.output())![1]!;
    for (const [path, fields] of Object.entries(expected.readModels)) {
      expect({ path, view: await query(path) }).toMatchObject({ path, view: fields });
    }
  }, 150_000);

  it('every event it delivers names its schema version, the one this release reads (agora events tail over SSE)', async () => {
    const count = Object.values(expected.audit).reduce((a, b) => a + b, 0) - expected.audit['other']!;
    const run = await runToCompletion('apps/cli/src/main.ts', ['events', 'tail', '--first', String(count), '--json'], { AGORA_URL: url }, 60_000);
    expect(run.stderr).toBe('');
    const delivered = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; metadata: Record<string, unknown> });
    expect(delivered).toHaveLength(count);
    const versions = delivered.filter((e) => eventByType(e.type) !== undefined).map((e) => ({ type: e.type, schemaVersion: e.metadata['schemaVersion'] }));
    expect(versions.length).toBeGreaterThan(count / 2);
    expect(versions).toEqual(versions.map(({ type }) => ({ type, schemaVersion: eventByType(type)!.version })));
  }, 90_000);

  it('the old fleet acts on top of it with its own keys: a proposal submitted, objected to, revised and approved; a deploy voted through', async () => {
    const { executive, reviewers, requester } = expected.fleet;
    const proposalId = `after-${name}`;
    const proposal = (id: string) => query<ProposalView>(`/v1/proposal/proposals/${id}`);
    const roundOpen = (round: number) => waitFor(async () => (await proposal(proposalId))?.rounds.some((r) => r.round === round && r.status === 'open') ?? false, `round ${round} of ${proposalId} to open`, 30_000);
    const cast = Object.entries(reviewers);

    await must(executive, 'SubmitProposal', { proposalId, title: 'after the frozen log', body: 'Move the nightly job to the new runner in one step.', problem: 'The old runner is end-of-life' });
    await roundOpen(1);
    const [objector, objectorConstitution] = cast[0]!;
    await must(objector, 'SubmitReview', { proposalId, round: 1, constitution: objectorConstitution, verdict: 'object', reasoning: 'One step leaves no way back.', constraint: 'Every step needs a path back', scenario: 'The new runner fails on the first night and the old one is gone.', suggestedRevision: 'Run both for a week.' });
    for (const [agent, constitution] of cast.slice(1)) await must(agent, 'SubmitReview', { proposalId, round: 1, constitution, verdict: 'approve', reasoning: 'No violation of my constitution.' });
    const objection = (await proposal(proposalId))!.objections.find((o) => o.status === 'open')!;
    await must(executive, 'ReviseProposal', { proposalId, body: 'Run the nightly job on both runners for a week, then retire the old one.', answers: [objection.objectionId] });
    await roundOpen(2);
    for (const [agent, constitution] of cast) await must(agent, 'SubmitReview', { proposalId, round: 2, constitution, verdict: 'approve', reasoning: 'No violation of my constitution.' });
    await waitFor(async () => (await proposal(proposalId))?.status === 'approved', `${proposalId} to be approved`, 30_000);
    expect(await proposal(proposalId)).toMatchObject({ proposer: executive, status: 'approved', revision: 2 });

    const requestId = `deploy-after-${name}`;
    await must(requester, 'CreateVotingSession', { requestId, actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out the release that reads old logs' });
    const session = () => query<VotingSessionView>(`/v1/voting/sessions/${requestId}`);
    for (const { agentId } of (await session())!.validators) await must(agentId, 'CastValidatorVote', { sessionId: requestId, decision: 'approve', confidence: 0.8, reasoning: 'The frozen log still audits clean.' });
    await waitFor(async () => (await session())?.status === 'decided', `${requestId} to be decided`, 30_000);
    expect((await session())!.recommendation).toMatchObject({ decision: 'approve' });
  }, 150_000);

  it('agora audit on the log with the new events on top: exit 0, no findings', async () => {
    await agora!.stop();
    agora = undefined;
    const { code, report } = await audit();
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    const before = Object.values(expected.audit).reduce((a, b) => a + b, 0);
    expect(report.events).toBeGreaterThan(before);
    expect(report.protocols['tribunal']!.events).toBeGreaterThan(expected.audit['tribunal']!);
    expect(report.protocols['voting']!.events).toBeGreaterThan(expected.audit['voting']!);
  }, 150_000);
});
