import { TribunalPolicy, type PolicySetting, type ReviewRules, type TribunalPolicyInput } from '@agora/contracts';
import { DomainError } from '@agora/decider';

export type { ReviewRules, TribunalPolicy, TribunalPolicyInput } from '@agora/contracts';

/**
 * A tribunal policy from configuration, defaults filled in (see the TribunalPolicy schema):
 * required constitutions by class (`default`: risk, premise, evidence, execution), at least 3
 * constitutions per round, a 24 h round deadline (a proposal may ask for 1 h to 7 days), escalation
 * after 3 contested rounds. Throws a TypeError naming every offending setting on a bad policy: a
 * class with fewer than `minConstitutions` constitutions, no `default` class, a deadline out of bounds.
 */
export function defineTribunalPolicy(input: TribunalPolicyInput = {}): TribunalPolicy {
  const parsed = TribunalPolicy.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(policy)'}: ${i.message}`);
  throw new TypeError(`invalid tribunal policy: ${problems.join('; ')}`);
}

export const DEFAULT_TRIBUNAL_POLICY: TribunalPolicy = defineTribunalPolicy();

/** AGORA_TRIBUNAL_POLICY: read by the proposal service, recorded in the log as the `tribunal` settings. */
export const TRIBUNAL_POLICY_SETTING: PolicySetting<TribunalPolicy> = {
  name: 'tribunal',
  env: 'AGORA_TRIBUNAL_POLICY',
  parse: (input) => defineTribunalPolicy(input as TribunalPolicyInput),
  help: `AGORA_TRIBUNAL_POLICY      the tribunal policy as JSON, or @<file> holding it, e.g.
                           {"roundDeadlineMs":86400000,"maxRoundsBeforeEscalation":3,
                            "requiredConstitutions":{"default":["risk","premise","evidence","execution"]}}
                           (default: those values; see TribunalPolicy in libs/contracts)`,
};

/** What a proposal asks for: its class and, optionally, its own round deadline. */
export interface RulesRequest {
  proposalClass: string;
  reviewDeadlineMs?: number | undefined;
}

/**
 * The rules that will decide one proposal, resolved from the policy at submission (and recorded in
 * ProposalSubmitted). Refuses an unknown class and a deadline outside the policy's bounds.
 */
export function rulesFor(policy: TribunalPolicy, request: RulesRequest): ReviewRules {
  const { proposalClass, reviewDeadlineMs } = request;
  const required = policy.requiredConstitutions[proposalClass];
  if (!required) {
    const known = Object.keys(policy.requiredConstitutions).sort();
    throw new DomainError('invalid_command', `unknown proposal class ${JSON.stringify(proposalClass)}: the tribunal policy knows ${known.join(', ')}`, {
      field: 'proposalClass',
      proposalClass,
      knownClasses: known,
    });
  }
  if (reviewDeadlineMs !== undefined && (reviewDeadlineMs < policy.minRoundDeadlineMs || reviewDeadlineMs > policy.maxRoundDeadlineMs)) {
    throw new DomainError(
      'invalid_command',
      `reviewDeadlineMs ${reviewDeadlineMs} is outside what the tribunal policy allows: ${policy.minRoundDeadlineMs} to ${policy.maxRoundDeadlineMs} ms`,
      { field: 'reviewDeadlineMs', reviewDeadlineMs, min: policy.minRoundDeadlineMs, max: policy.maxRoundDeadlineMs },
    );
  }
  return {
    requiredConstitutions: [...new Set(required)],
    minConstitutions: policy.minConstitutions,
    roundDeadlineMs: reviewDeadlineMs ?? policy.roundDeadlineMsByClass[proposalClass] ?? policy.roundDeadlineMs,
    maxRoundsBeforeEscalation: policy.maxRoundsBeforeEscalation,
  };
}
