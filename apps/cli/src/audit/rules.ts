/**
 * The rules the audit decides every command again with: one decider per stream category, under the
 * settings in force at the command's position. The services record the settings their deciders
 * read in the log (`settings-<name>`, SettingsRecorded): from a setting's first record on, the
 * audit decides under the recorded value, whatever the auditor's environment. Before it (a log
 * written before settings were recorded) it decides under the policies it was given
 * (`AuditPolicies`: AGORA_TRIBUNAL_POLICY, AGORA_DIALECTIC_POLICY, AGORA_BREAKER_RISK_THRESHOLD,
 * the chamber's AGORA_CHAMBER_* and providers' settings), as before.
 */
import { AUDIT_LOG_STREAM, CHAMBER_BUDGET_CATEGORY, MODEL_CALLS_CATEGORY, CHAMBER_SESSION_CATEGORY, DEBATE_CATEGORY, DIALECTIC_SESSION_CATEGORY, SETTINGS_CATEGORY, VOTING_CONFIG_CATEGORY, type DialecticPolicy, type TribunalPolicy } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { budgetDecider, createChamberDecider, type ChamberPolicy } from '@agora/domain-chamber';
import { debateDecider } from '@agora/domain-debate';
import { DEFAULT_BREAKER_POLICY, defineBreakerPolicy, type BreakerPolicy } from '@agora/domain-common';
import { createDialecticDecider, DIALECTIC_POLICY_SETTING } from '@agora/domain-dialectic';
import { createAgentDecider, modelLedgerDecider } from '@agora/domain-registry';
import { createProposalDecider, TRIBUNAL_POLICY_SETTING } from '@agora/domain-tribunal';
import { votingConfigDecider, votingSessionDecider } from '@agora/domain-voting';
import { foldSettings, logCheckpointDecider, NO_SETTINGS, settingsDecider, type SettingsInForce } from '@agora/eventsourcing';

export interface AuditPolicies {
  tribunal?: TribunalPolicy;
  dialectic?: DialecticPolicy;
  breakerRiskThreshold?: number;
  /** The chamber's policy (AGORA_CHAMBER_*, AGORA_PROVIDERS, AGORA_MODEL_PRICES): without it (and none recorded), chamber sessions are not decided again. */
  chamber?: ChamberPolicy;
}

// Deciders of different aggregates, held side by side: their command and event types differ.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDecider = Decider<Command, DomainEvent, any>;

export interface AggregateRules {
  /** The protocol, for the summary: registry, tribunal, voting, dialectic, audit, settings. */
  protocol: string;
  decider: AnyDecider;
}

const AUDIT_CATEGORY = AUDIT_LOG_STREAM.split('-')[0]!;

/** The policies each decider is built with: the auditor's, replaced by each setting the log records. */
interface DeciderPolicies {
  tribunal: TribunalPolicy | undefined;
  dialectic: DialecticPolicy | undefined;
  breaker: BreakerPolicy;
  chamber: ChamberPolicy | undefined;
}

/** Category → rules, under these policies. A category without rules is reported (no decider to decide it again). */
function rulesUnder(policies: DeciderPolicies, bootstrapOperators: readonly string[]): Map<string, AggregateRules> {
  const rules: [string, AggregateRules][] = [
    ['agent', { protocol: 'registry', decider: createAgentDecider(policies.breaker, { bootstrapOperators }) as unknown as AnyDecider }],
    [MODEL_CALLS_CATEGORY, { protocol: 'model_calls', decider: modelLedgerDecider as unknown as AnyDecider }],
    ['proposal', { protocol: 'tribunal', decider: createProposalDecider(policies.tribunal) as unknown as AnyDecider }],
    ['voting_session', { protocol: 'voting', decider: votingSessionDecider as unknown as AnyDecider }],
    [VOTING_CONFIG_CATEGORY, { protocol: 'voting', decider: votingConfigDecider as unknown as AnyDecider }],
    [DIALECTIC_SESSION_CATEGORY, { protocol: 'dialectic', decider: createDialecticDecider(policies.dialectic) as unknown as AnyDecider }],
    [CHAMBER_BUDGET_CATEGORY, { protocol: 'chamber', decider: budgetDecider as unknown as AnyDecider }],
    [DEBATE_CATEGORY, { protocol: 'debate', decider: debateDecider as unknown as AnyDecider }],
    [AUDIT_CATEGORY, { protocol: 'audit', decider: logCheckpointDecider as unknown as AnyDecider }],
    [SETTINGS_CATEGORY, { protocol: 'settings', decider: settingsDecider as unknown as AnyDecider }],
  ];
  if (policies.chamber) rules.push([CHAMBER_SESSION_CATEGORY, { protocol: 'chamber', decider: createChamberDecider(policies.chamber) as unknown as AnyDecider }]);
  return new Map(rules);
}

/**
 * The rules at a position of the log: `get` answers for the position reached, `record` folds a
 * SettingsRecorded (and rebuilds the rules it changes). `inForce` is the recorded settings as a
 * small foldable value (foldSettings), to keep beside a position and resume from with `resume`.
 */
export class AuditRules {
  private rules: Map<string, AggregateRules>;
  private settings: SettingsInForce = NO_SETTINGS;

  constructor(
    private readonly given: AuditPolicies = {},
    /** The bootstrap operators the auditor trusts: their ids are reserved to them (RegisterAgent, rules 4 on). */
    private readonly bootstrapOperators: readonly string[] = [],
  ) {
    this.rules = rulesUnder(this.policies(), bootstrapOperators);
  }

  get(category: string): AggregateRules | undefined {
    return this.rules.get(category);
  }

  /** The settings the log recorded up to the position reached. */
  get inForce(): SettingsInForce {
    return this.settings;
  }

  /** Continues from settings kept at a position (a resumed audit). Throws when a recorded value no longer parses. */
  resume(inForce: SettingsInForce): void {
    this.settings = inForce;
    this.rules = rulesUnder(this.policies(), this.bootstrapOperators);
  }

  /**
   * Folds one event of the log: a SettingsRecorded puts its value in force for what follows.
   * Throws (the caller reports it) when the recorded value is not a valid policy; the value before stays in force.
   */
  record(event: { streamId: string; type: string; data: unknown; position: string }): void {
    const next = foldSettings(this.settings, event);
    if (next === this.settings) return;
    const before = this.settings;
    this.settings = next;
    try {
      this.rules = rulesUnder(this.policies(), this.bootstrapOperators);
    } catch (error) {
      this.settings = before;
      throw error;
    }
  }

  /** Each decider's policy: the recorded one, else the auditor's (a log from before settings were recorded). */
  private policies(): DeciderPolicies {
    const { tribunal, dialectic, breaker, chamber } = this.settings;
    return {
      tribunal: tribunal ? TRIBUNAL_POLICY_SETTING.parse(tribunal.settings) : this.given.tribunal,
      dialectic: dialectic ? DIALECTIC_POLICY_SETTING.parse(dialectic.settings) : this.given.dialectic,
      breaker: breaker ? defineBreakerPolicy(breaker.settings) : this.given.breakerRiskThreshold === undefined ? DEFAULT_BREAKER_POLICY : defineBreakerPolicy({ riskThreshold: this.given.breakerRiskThreshold }),
      chamber: chamber ? (chamber.settings as unknown as ChamberPolicy) : this.given.chamber,
    };
  }
}
