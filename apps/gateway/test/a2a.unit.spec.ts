/**
 * The A2A pieces that need no server: AGORA_A2A_URL, where a message carries its command, and how
 * each skill reads its aggregate's view as an A2A task state (the e2e suite,
 * apps/standalone/test/a2a.e2e.spec.ts, runs each skill against the standalone process).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Role, type Message } from '@a2a-js/sdk';
import type { ChamberSessionView, DialecticSessionView, ProposalView, VotingSessionView } from '@agora/contracts';
import { CommandEnvelope } from '@agora/contracts';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { agentCard } from '../src/a2a/card.js';
import { draftCommand, draftStatus, SIGNED_COMMAND_EXTENSION } from '../src/a2a/draft.js';
import { commandsIn, dataPart, textPart } from '../src/a2a/parts.js';
import { AGORA_SKILLS, skillStartedBy, type AgoraSkill } from '../src/a2a/skills.js';
import { followedByTaskId, namedTaskId } from '../src/a2a/task-id.js';
import { a2aSettingFromEnv } from '../src/options.js';

const skill = <V>(id: string) => AGORA_SKILLS.find((s) => s.id === id) as AgoraSkill<V>;
const stateOf = <V>(id: string, view: Partial<V>, caller = 'envoy') => skill<V>(id).status(view as V, caller).state;

describe('AGORA_A2A_URL', () => {
  it('names the public base URL the Agent Card gives, or turns A2A off; anything else stops the process', () => {
    expect(a2aSettingFromEnv({})).toEqual({});
    expect(a2aSettingFromEnv({ AGORA_A2A_URL: 'https://agora.example.org/' })).toEqual({ url: 'https://agora.example.org' });
    expect(a2aSettingFromEnv({ AGORA_A2A_URL: 'off' })).toBe(false);
    expect(() => a2aSettingFromEnv({ AGORA_A2A_URL: 'agora.example.org' })).toThrow(/^AGORA_A2A_URL must be off or the gateway's public http\(s\) base URL/);
  });

  it('AGORA_A2A_PUSH_ALLOW lists the webhook hosts (host or host:port) an operator allows on http and private addresses', () => {
    expect(a2aSettingFromEnv({ AGORA_A2A_PUSH_ALLOW: 'Hooks.internal, 127.0.0.1:9999,[::1]:80' })).toEqual({ pushAllowHosts: ['hooks.internal', '127.0.0.1:9999', '[::1]:80'] });
    expect(() => a2aSettingFromEnv({ AGORA_A2A_PUSH_ALLOW: 'http://hooks.internal' })).toThrow(/^AGORA_A2A_PUSH_ALLOW must be host names or addresses/);
  });

  it('AGORA_A2A_PUSH_CONFIG_TTL_SECONDS is how long a push configuration is kept after it was last set', () => {
    expect(a2aSettingFromEnv({ AGORA_A2A_PUSH_CONFIG_TTL_SECONDS: '3600' })).toEqual({ pushConfigTtlSeconds: 3600 });
    expect(() => a2aSettingFromEnv({ AGORA_A2A_PUSH_CONFIG_TTL_SECONDS: '0' })).toThrow(/AGORA_A2A_PUSH_CONFIG_TTL_SECONDS.*positive whole number of seconds/);
  });
});

describe('the gateway\'s modules', () => {
  /** The gateway's source files and the files of the gateway each imports (type imports too). */
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const imports = (file: string): string[] => [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.{1,2}\/[^']+)\.js';/gms)].map((m) => resolve(dirname(file), `${m[1]}.ts`));

  it('no import circle goes through apps/gateway/src/a2a', () => {
    const graph = new Map(files(src).map((f) => [f, imports(f)]));
    const circles: string[] = [];
    const visit = (file: string, path: string[]) => {
      const at = path.indexOf(file);
      if (at >= 0) {
        const circle = path.slice(at).concat(file).map((f) => f.slice(src.length + 1));
        if (circle.some((f) => f.startsWith('a2a/'))) circles.push(circle.join(' -> '));
        return;
      }
      if (path.length > 40) return;
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    };
    for (const file of graph.keys()) if (file.includes('/a2a/')) visit(file, []);
    expect(graph.size).toBeGreaterThan(10);
    expect([...new Set(circles)]).toEqual([]);
  });
});

describe('a message carries its command in a data part', () => {
  const message = (parts: Message['parts']): Message => ({ messageId: 'm', contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] });

  it('as {command: <envelope>} or as the envelope itself, in a data part or in a text part that is such a JSON object', () => {
    const envelope = { type: 'SubmitProposal', actor: 'envoy' };
    expect(commandsIn(message([textPart('please'), dataPart({ command: envelope })]))).toEqual([envelope]);
    expect(commandsIn(message([dataPart(envelope)]))).toEqual([envelope]);
    expect(commandsIn(message([textPart(JSON.stringify({ command: envelope }))]))).toEqual([envelope]);
    expect(commandsIn(message([textPart('{"type": not json'), textPart('[1]'), dataPart([1, 2])]))).toEqual([]);
  });

  it("drafts each skill's start command from the Agent Card's example as it is: the caller as actor, a fresh id, a payload its contract takes", () => {
    const card = agentCard({ url: 'http://agora.test', version: '1', readsClosed: true, documentationUrl: 'http://agora.test/docs' });
    expect(card.capabilities?.extensions).toEqual([expect.objectContaining({ uri: SIGNED_COMMAND_EXTENSION, required: false, description: expect.stringMatching(/signed by the caller/) })]);
    for (const cardSkill of card.skills) {
      const [fields] = commandsIn(message([textPart(cardSkill.examples[0]!)]));
      const draft = draftCommand(fields, 'envoy', undefined);
      expect({ skill: draft.skill?.id, reason: draft.reason }).toEqual({ skill: cardSkill.id, reason: undefined });
      expect(draft.command).toEqual({ commandId: expect.stringMatching(/^[0-9a-f-]{36}$/), type: skill(cardSkill.id).starts[0], actor: 'envoy', issuedAt: expect.any(String), payload: expect.objectContaining((fields!['payload'] as object)) });
      // Signed as it is, it passes the command gate's schema: the envelope's own fields and the payload's contract.
      const signed = createSignedCommand({ ...(draft.command as { type: string; actor: string; payload: Record<string, unknown>; commandId: string; issuedAt: string }), secretKey: generateKeyPair().secretKey });
      expect(CommandEnvelope.safeParse(signed).success).toBe(true);
      expect(draftStatus(draft, 't1').data).toMatchObject({ command: draft.command, signing: { version: 'agora.command.v1' } });
    }
    // Two drafts of one example name two aggregates (the example can be sent again).
    const twice = [0, 1].map(() => draftCommand({ type: 'SubmitProposal', payload: { title: 't', body: 'b', problem: 'p' } }, 'envoy', undefined).command!['payload'] as { proposalId: string });
    expect(twice[0]!.proposalId).not.toBe(twice[1]!.proposalId);
    expect((draftCommand({ type: 'ReportHealth', payload: { health: 0.3, risk: 0.7 } }, 'nova', undefined).command!['payload'] as { agentId: string }).agentId).toBe('nova');
  });

  it('says why when the fields make no command: no skill named, a payload its contract refuses, a start command of another skill in the task, no actor with reads open', () => {
    expect(draftCommand(undefined, 'envoy', undefined)).toMatchObject({ skill: undefined, command: undefined, reason: expect.stringMatching(/^The message names no skill: send \{"command"/) });
    expect(draftCommand({ type: 'CastValidatorVote' }, 'envoy', undefined).reason).toMatch(/^"CastValidatorVote" starts no skill/);
    expect(draftCommand({ type: 'SubmitProposal', payload: { title: 7 } }, 'envoy', undefined).reason).toMatch(/^The fields do not make a SubmitProposal: payload.title: /);
    const tribunal = skill('tribunal-review');
    expect(draftCommand({ type: 'CreateVotingSession', payload: {} }, 'envoy', tribunal)).toMatchObject({ skill: tribunal, command: undefined, reason: 'this task is a tribunal-review task: it starts with SubmitProposal' });
    expect(draftCommand({ type: 'ReviseProposal', payload: { proposalId: 'p1' } }, 'envoy', tribunal)).toMatchObject({ skill: tribunal, command: undefined, reason: 'this task is a tribunal-review task: it starts with SubmitProposal' });
    expect(draftCommand({ skill: 'validator-vote', payload: { actionType: 'x', riskLevel: 'high', summary: 's' } }, undefined, undefined).reason).toMatch(/^Name the agent that signs/);
    expect(draftStatus(draftCommand(undefined, 'envoy', undefined), 't1').text).toMatch(/Then sign the start command of a skill with the agent's own key \(the signing text agora.command.v1/);
  });

  it('names the skill its command starts', () => {
    expect(['SubmitProposal', 'CreateVotingSession', 'ProposeChamberSession', 'ReportHealth'].map((type) => skillStartedBy(type)?.id)).toEqual(['tribunal-review', 'validator-vote', 'chamber-consultation', 'dialectic-recovery']);
    expect(skillStartedBy('CastValidatorVote')).toBeUndefined();
  });

  it("names a task after its skill and the aggregate its start command names, and reads that back; any other id names nothing", () => {
    const named = AGORA_SKILLS.map((s) => s.named?.({ proposalId: 'p1', requestId: 'r1', sessionId: 's1' })).map((followed, i) => (followed === undefined ? undefined : namedTaskId(AGORA_SKILLS[i]!, followed)));
    expect(named).toEqual(['tribunal-review:proposal-p1', 'validator-vote:voting_session-r1', 'chamber-consultation:chamber_session-s1', undefined]);
    expect(followedByTaskId('validator-vote:voting_session-r1:x')).toMatchObject({ skill: { id: 'validator-vote' }, followed: { category: 'voting_session', streamId: 'voting_session-r1:x', id: 'r1:x' } });
    expect(followedByTaskId('dialectic-recovery:dialectic_session-nova-p1')?.followed.id).toBe('nova-p1');
    for (const id of ['validator-vote:proposal-p1', 'validator-vote:voting_session-', 'nothing:proposal-p1', 'proposal-p1', '8f1c2e9a-0000-4000-8000-000000000000']) expect(followedByTaskId(id)).toBeUndefined();
  });
});

describe("each skill's task state follows its aggregate", () => {
  it('tribunal: working in review, input-required when escalated, completed approved or rejected, canceled withdrawn', () => {
    const round = { round: 1, reviews: [], assignments: [{}, {}] };
    expect(stateOf<ProposalView>('tribunal-review', { status: 'review', rounds: [round] as never })).toBe('working');
    expect(stateOf<ProposalView>('tribunal-review', { status: 'escalated', rounds: [round] as never })).toBe('input-required');
    expect(stateOf<ProposalView>('tribunal-review', { status: 'approved', rounds: [round] as never })).toBe('completed');
    expect(stateOf<ProposalView>('tribunal-review', { status: 'rejected', rounds: [round] as never })).toBe('completed');
    expect(stateOf<ProposalView>('tribunal-review', { status: 'withdrawn', rounds: [] })).toBe('canceled');
  });

  it('vote: working while voting, input-required when a person must decide (escalated or expired), completed once decided, canceled when cancelled', () => {
    const base = { votes: [], validators: [], awaitingOperator: false, finalDecision: null, recommendation: null, resolution: null, cancellation: null };
    expect(stateOf<VotingSessionView>('validator-vote', { ...base, status: 'voting' })).toBe('working');
    expect(stateOf<VotingSessionView>('validator-vote', { ...base, status: 'expired', awaitingOperator: true })).toBe('input-required');
    expect(stateOf<VotingSessionView>('validator-vote', { ...base, status: 'decided', finalDecision: 'deny' })).toBe('completed');
    expect(stateOf<VotingSessionView>('validator-vote', { ...base, status: 'cancelled', cancellation: { reason: 'x', cancelledBy: 'envoy', cancelledAt: '2026-01-01T00:00:00.000Z' } })).toBe('canceled');
  });

  it('chamber: input-required awaiting approval, working while the panel deliberates, completed on either conclusion, rejected, failed or canceled otherwise', () => {
    const of = (status: string) => stateOf<ChamberSessionView>('chamber-consultation', { summary: { status, answered: [], pendingCalls: 0 } as never, transcript: [] });
    expect(['awaiting_approval', 'blind', 'cross_exam', 'arbitration', 'consensus', 'no_consensus', 'rejected', 'expired', 'failed', 'cancelled'].map(of)).toEqual([
      'input-required',
      'working',
      'working',
      'working',
      'completed',
      'completed',
      'rejected',
      'rejected',
      'failed',
      'canceled',
    ]);
  });

  it("recovery: input-required on the caller's turn or an operator's, working on the others', completed resolved or kept paused", () => {
    const of = (status: string, awaiting: string[]) => stateOf<DialecticSessionView>('dialectic-recovery', { status: status as never, awaiting, round: 0 }, 'nova');
    expect(of('awaiting_thesis', ['nova'])).toBe('input-required');
    expect(of('awaiting_antithesis', ['sage'])).toBe('working');
    expect(of('awaiting_signatures', ['nova', 'sage'])).toBe('input-required');
    expect(of('awaiting_signatures', ['sage'])).toBe('working');
    expect(of('awaiting_operator', [])).toBe('input-required');
    expect(of('resolved', [])).toBe('completed');
    expect(of('stayed_paused', [])).toBe('completed');
  });
});
