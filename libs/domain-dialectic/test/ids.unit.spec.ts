import { recoverySessionId } from '@agora/domain-common';
import { dialecticStreamId, parseQuorumVotingSessionId, quorumVotingSessionId } from '../src/ids.js';

describe('ids', () => {
  it('names one recovery session per pause, and its stream', () => {
    expect(recoverySessionId('critical_agent', 3)).toBe('critical_agent-p3');
    expect(dialecticStreamId('critical_agent-p3')).toBe('dialectic_session-critical_agent-p3');
  });

  it("names a quorum's voting session after the recovery and the escalation, and parses it back", () => {
    expect(quorumVotingSessionId('critical_agent-p3', 2)).toBe('critical_agent-p3-q2');
    expect(parseQuorumVotingSessionId('critical_agent-p3-q2')).toEqual({ sessionId: 'critical_agent-p3', escalation: 2 });
    expect(parseQuorumVotingSessionId('a-b-p1-q10')).toEqual({ sessionId: 'a-b-p1', escalation: 10 });
    expect(parseQuorumVotingSessionId('deploy-1234')).toBeUndefined();
    expect(parseQuorumVotingSessionId('some-request-q1')).toBeUndefined();
  });
});
