import { ProposalRecord } from '@agora/contracts';
import type { ProposalCommand, ProposalEvent } from '../src/proposal.js';
import { approve, assignments, at, ctx, object, openRound, PID, play, spec, stateOf, submit } from './fixtures.js';

const DIGEST = 'a'.repeat(64);
const CALL = { server: 'memory', tool: 'create_entities', callDigest: DIGEST };
const release = (callDigest = DIGEST, c = ctx('seldon', at(500))): ProposalCommand => ({ type: 'ReleaseProposalToolCall', context: c, payload: { proposalId: PID, callDigest } });
const record = (outcome: 'ok' | 'tool_error' | 'failed' = 'ok', resultDigest = 'b'.repeat(64), c = ctx('seldon', at(600))): ProposalCommand => ({ type: 'RecordProposalToolCallResult', context: c, payload: { proposalId: PID, outcome, resultDigest } });
/** A proposal submitted for a tool call, in its first round. */
const forCall = (): ProposalEvent[] => play([], submit({ toolCall: CALL }), openRound(1));
const approved = (): ProposalEvent[] => play(forCall(), ...assignments.map((a) => approve(a.reviewer, a.constitution, 1)));

describe('a proposal that decides a governed tool call', () => {
  it('records the call it decides, and an approved proposal releases it once, for its own digest', () => {
    expect(forCall()[0]).toMatchObject({ type: 'ProposalSubmitted', data: { toolCall: CALL } });
    spec(approved())
      .when(release())
      .then([{ type: 'ProposalToolCallReleased', data: { proposalId: PID, server: 'memory', tool: 'create_entities', callDigest: DIGEST, releasedBy: 'seldon', releasedAt: at(500) } }]);
    const released = play(approved(), release());
    spec(released).when(release()).thenRefuses('illegal_state', /already used, at .*: an approval releases its call once/);
    const state = stateOf(play(released, record()));
    expect(state.toolCall).toEqual({ ...CALL, releasedAt: at(500), outcome: 'ok', resultDigest: 'b'.repeat(64), completedAt: at(600) });
    ProposalRecord.parse(state);
  });

  it('refuses another digest, a proposal not approved, one not made for a call, and anyone but the proposer', () => {
    spec(approved()).when(release('c'.repeat(64))).thenRefuses('illegal_state', /decided another call \(memory\/create_entities, digest a+\), not c+/);
    spec(forCall()).when(release()).thenRefuses('illegal_state', /has not approved the call \(status review\)/);
    spec(play(forCall(), object('harbinger', 'risk', 1))).when(release()).thenRefuses('illegal_state', /has not approved/);
    spec(play([], submit(), openRound(1), ...assignments.map((a) => approve(a.reviewer, a.constitution, 1)))).when(release()).thenRefuses('illegal_state', /was not submitted for a tool call/);
    spec(approved()).when(release(DIGEST, ctx('mallory', at(500), ['executive']))).thenRefuses('forbidden', /only the proposer seldon/);
  });

  it('records the result once, after the release: the same record again changes nothing, another is refused', () => {
    spec(approved()).when(record()).thenRefuses('illegal_state', /released no tool call/);
    const recorded = play(approved(), release(), record('tool_error'));
    spec(recorded).when(record('tool_error')).thenNothing();
    spec(recorded).when(record('ok')).thenRefuses('illegal_state', /is recorded already \(tool_error/);
  });

  it('keeps a repeated submission idempotent only for the same call', () => {
    spec(forCall()).when(submit({ toolCall: CALL })).thenNothing();
    spec(forCall()).when(submit({ toolCall: { ...CALL, callDigest: 'c'.repeat(64) } })).thenRefuses('illegal_state', /already exists/);
  });
});
