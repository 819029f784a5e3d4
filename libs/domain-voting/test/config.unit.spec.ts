// The voting configuration aggregate (the seed's updateConfig), recorded so that a replay knows
// which rules decided each session.
import { DEFAULT_VOTING_CONFIG } from '@agora/contracts';
import { DeciderSpecification } from '@agora/decider';
import { DEFAULT_CONFIG, defineVotingConfig, votingConfigDecider, votingConfigStreamId, type VotingConfigCommand, type VotingConfigEvent } from '../src/config.js';
import { at, ctx } from './fixtures.js';

const spec = DeciderSpecification.for(votingConfigDecider);
const update = (payload: VotingConfigCommand['payload'], c = ctx('root', at(1))): VotingConfigCommand => ({ type: 'UpdateVotingConfig', context: c, payload });
const updated = (config: object, changed: string[], updatedAt = at(1)): VotingConfigEvent => ({
  type: 'VotingConfigUpdated',
  data: { config: { ...DEFAULT_CONFIG, ...config }, changed, updatedBy: 'root', updatedAt },
});

describe('configuration', () => {
  it("starts from the seed's defaults and records each change as the whole configuration with what changed", () => {
    expect(DEFAULT_CONFIG).toEqual({ minValidators: 3, maxValidators: 5, votingTimeoutMs: 300_000, requireUnanimousForCritical: true, minConfidence: 0.6, weightByTrustScore: true });
    expect(DEFAULT_CONFIG).toEqual(DEFAULT_VOTING_CONFIG);
    expect(votingConfigStreamId()).toBe('voting_config-global');
    spec([]).when(update({ votingTimeoutMs: 600_000 })).then([updated({ votingTimeoutMs: 600_000 }, ['votingTimeoutMs'])]);
    const history = [updated({ votingTimeoutMs: 600_000 }, ['votingTimeoutMs'])];
    spec(history)
      .when(update({ votingTimeoutMs: 600_000, minConfidence: 0.7, weightByTrustScore: false }, ctx('root', at(2))))
      .then([updated({ votingTimeoutMs: 600_000, minConfidence: 0.7, weightByTrustScore: false }, ['minConfidence', 'weightByTrustScore'], at(2))]);
    spec(history).when(update({ votingTimeoutMs: 600_000 })).thenNothing();
  });

  it('refuses minValidators above maxValidators, and anyone but an operator', () => {
    spec([]).when(update({ minValidators: 6 })).thenRefuses('invalid_command', /minValidators 6 would exceed maxValidators 5/);
    spec([]).when(update({ minValidators: 4 }, ctx('deployer'))).thenRefuses('forbidden', /needs the role operator/);
    expect(() => defineVotingConfig({ minValidators: 5, maxValidators: 4 })).toThrow(/minValidators 5 exceeds maxValidators 4/);
    expect(() => defineVotingConfig({ minValidators: 2 })).toThrow(/minValidators/);
  });
});
