import { DomainError } from '@agora/decider';
import { DEFAULT_TRIBUNAL_POLICY, defineTribunalPolicy, rulesFor } from '../src/policy.js';

describe('tribunal policy', () => {
  it('defaults to the minimal viable tribunal of the seed: four constitutions, at least 3, 24 h rounds, escalation after 3 rounds', () => {
    expect(DEFAULT_TRIBUNAL_POLICY).toEqual({
      requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'] },
      minConstitutions: 3,
      roundDeadlineMs: 86_400_000,
      roundDeadlineMsByClass: {},
      minRoundDeadlineMs: 3_600_000,
      maxRoundDeadlineMs: 604_800_000,
      maxRoundsBeforeEscalation: 3,
    });
  });

  it('refuses a class with fewer than 3 (minConstitutions) constitutions, and a minimum below 3', () => {
    expect(() => defineTribunalPolicy({ requiredConstitutions: { default: ['risk', 'premise', 'evidence'], quick: ['risk', 'premise'] } })).toThrow(/class quick requires 2 distinct constitutions; at least 3/);
    expect(() => defineTribunalPolicy({ requiredConstitutions: { default: ['risk', 'risk', 'premise'] } })).toThrow(/class default requires 2 distinct/);
    expect(() => defineTribunalPolicy({ minConstitutions: 2 })).toThrow(/minConstitutions/);
    expect(() => defineTribunalPolicy({ minConstitutions: 5 })).toThrow(/class default requires 4 distinct constitutions; at least 5/);
  });

  it('refuses a policy without the default class, and deadlines out of bounds or for unknown classes', () => {
    expect(() => defineTribunalPolicy({ requiredConstitutions: { frame: ['risk', 'premise', 'evidence'] } })).toThrow(/"default" must be configured/);
    expect(() => defineTribunalPolicy({ roundDeadlineMs: 10_000 })).toThrow(/outside minRoundDeadlineMs/);
    expect(() => defineTribunalPolicy({ roundDeadlineMsByClass: { frame: 7_200_000 } })).toThrow(/class frame has a deadline but no required constitutions/);
    expect(() => defineTribunalPolicy({ minRoundDeadlineMs: 7_200_000, maxRoundDeadlineMs: 3_600_000, roundDeadlineMs: 3_600_000 })).toThrow(/minRoundDeadlineMs exceeds maxRoundDeadlineMs/);
    expect(() => defineTribunalPolicy({ maxRoundsBeforeEscalation: 0 })).toThrow(/maxRoundsBeforeEscalation/);
  });

  describe('rulesFor', () => {
    const policy = defineTribunalPolicy({
      requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'], frame: ['premise', 'evidence', 'risk'] },
      roundDeadlineMsByClass: { frame: 2 * 86_400_000 },
    });

    it('resolves the class: its constitutions and deadline, or the defaults', () => {
      expect(rulesFor(policy, { proposalClass: 'default' })).toEqual({ requiredConstitutions: ['risk', 'premise', 'evidence', 'execution'], minConstitutions: 3, roundDeadlineMs: 86_400_000, maxRoundsBeforeEscalation: 3 });
      expect(rulesFor(policy, { proposalClass: 'frame' })).toEqual({ requiredConstitutions: ['premise', 'evidence', 'risk'], minConstitutions: 3, roundDeadlineMs: 172_800_000, maxRoundsBeforeEscalation: 3 });
    });

    it("takes a proposal's own deadline within the policy's bounds", () => {
      expect(rulesFor(policy, { proposalClass: 'frame', reviewDeadlineMs: 7_200_000 }).roundDeadlineMs).toBe(7_200_000);
    });

    it('refuses an unknown class, naming the known ones', () => {
      let error: unknown;
      try {
        rulesFor(policy, { proposalClass: 'budget' });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'invalid_command', message: 'unknown proposal class "budget": the tribunal policy knows default, frame', details: { field: 'proposalClass', knownClasses: ['default', 'frame'] } });
    });

    it('refuses a deadline shorter or longer than the policy allows (an executive cannot out-run its reviewers)', () => {
      expect(() => rulesFor(policy, { proposalClass: 'default', reviewDeadlineMs: 60_000 })).toThrow(/reviewDeadlineMs 60000 is outside what the tribunal policy allows: 3600000 to 604800000 ms/);
      expect(() => rulesFor(policy, { proposalClass: 'default', reviewDeadlineMs: 8 * 86_400_000 })).toThrow(/outside what the tribunal policy allows/);
    });
  });
});
