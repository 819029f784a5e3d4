// Validator selection and management (the seed's selectValidators, registerValidator,
// unregisterValidator, getValidators): the registry is the validator list, and the selection is a
// pure function of what it offers, recorded in the session so a replay never selects again.
import { eligibleValidators, selectValidators, tierOf } from '../src/selection.js';
import { candidates, created, play, create, stateOf } from './fixtures.js';

const none = { minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] };
const ids = (list: { agentId: string }[]) => list.map((v) => v.agentId);

describe('validator selection', () => {
  it('selects at most maxValidators, most trusted first, ties by agent id, whatever the order of the candidates', () => {
    expect(ids(selectValidators(candidates, none, 5))).toEqual(['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot', 'ethics_bot']);
    expect(ids(selectValidators([...candidates].reverse(), none, 3))).toEqual(['security_bot', 'compliance_bot', 'ops_bot']);
    const tied = [
      { agentId: 'b_bot', displayName: 'B', trustScore: 700, specializations: [], status: 'active' },
      { agentId: 'a_bot', displayName: 'A', trustScore: 700, specializations: [], status: 'active' },
    ];
    expect(ids(selectValidators(tied, none, 5))).toEqual(['a_bot', 'b_bot']);
  });

  it('filters by minimum trust score and excluded agents', () => {
    expect(ids(selectValidators(candidates, { ...none, minTrustScore: 800 }, 5))).toEqual(['security_bot', 'compliance_bot', 'ops_bot']);
    expect(ids(selectValidators(candidates, { ...none, excludeAgents: ['security_bot', 'ops_bot'] }, 5))).toEqual(['compliance_bot', 'risk_bot', 'ethics_bot', 'junior_bot']);
  });

  it('covers the preferred specializations first, in order, each by its most trusted holder; the rest by trust', () => {
    // ethics (720) and the low-trust security expert are not among the three most trusted, but ethics is preferred.
    expect(ids(selectValidators(candidates, { ...none, preferredSpecializations: ['ethics', 'security'] }, 3))).toEqual(['security_bot', 'compliance_bot', 'ethics_bot']);
    // security is held by security_bot (900), risk_bot (750) and junior_bot (300): the most trusted covers it.
    expect(ids(selectValidators(candidates, { ...none, minTrustScore: 0, excludeAgents: ['security_bot'], preferredSpecializations: ['security'] }, 3))).toEqual(['compliance_bot', 'ops_bot', 'risk_bot']);
    // A specialization nobody holds is skipped.
    expect(ids(selectValidators(candidates, { ...none, preferredSpecializations: ['astrology'] }, 3))).toEqual(['security_bot', 'compliance_bot', 'ops_bot']);
    // More preferences than places: the first ones win.
    expect(ids(selectValidators(candidates, { ...none, preferredSpecializations: ['ethics', 'operations', 'risk', 'compliance'] }, 3))).toEqual(['ops_bot', 'risk_bot', 'ethics_bot']);
  });
});

describe('validator management', () => {
  it('derives the tier from the trust score, as data: UNTRUSTED <200, PROBATIONARY <500, STANDARD <700, TRUSTED <900, ELITE', () => {
    expect([0, 199, 200, 499, 500, 699, 700, 899, 900, 1000].map(tierOf)).toEqual([
      'UNTRUSTED',
      'UNTRUSTED',
      'PROBATIONARY',
      'PROBATIONARY',
      'STANDARD',
      'STANDARD',
      'TRUSTED',
      'TRUSTED',
      'ELITE',
      'ELITE',
    ]);
  });

  it('selects a validator once registered and never one disabled (unregistered); a duplicate counts once', () => {
    const newcomer = { agentId: 'audit_bot', displayName: 'Audit', trustScore: 950, specializations: ['audit'], status: 'active' };
    expect(ids(selectValidators([...candidates, newcomer], none, 3))).toEqual(['audit_bot', 'security_bot', 'compliance_bot']);
    const disabled = candidates.map((c) => (c.agentId === 'security_bot' ? { ...c, status: 'disabled' } : c));
    expect(ids(eligibleValidators(disabled, none))).not.toContain('security_bot');
    expect(ids(eligibleValidators([...candidates, { ...candidates[0]!, trustScore: 100 }], none)).filter((id) => id === 'security_bot')).toHaveLength(1);
  });

  it('records the selection in the session: a replay with another registry keeps the validators', () => {
    const history = created();
    const before = stateOf(history).validators;
    // The registry changes (trust inverted, a newcomer); the session was selected once and stays.
    const reshuffled = candidates.map((c) => ({ ...c, trustScore: 1000 - c.trustScore }));
    const again = play(history, create({ pool: reshuffled }));
    expect(stateOf(again).validators).toEqual(before);
    expect(before.map((v) => v.tier)).toEqual(['ELITE', 'TRUSTED', 'TRUSTED', 'TRUSTED', 'TRUSTED']);
  });
});
