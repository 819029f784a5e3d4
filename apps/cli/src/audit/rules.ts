/**
 * The rules the audit decides every command again with: one decider per stream category, under
 * the same policies the services run (AGORA_TRIBUNAL_POLICY, AGORA_DIALECTIC_POLICY,
 * AGORA_BREAKER_RISK_THRESHOLD, the chamber's AGORA_CHAMBER_* and providers' settings), and the protocol each category belongs to (for the summary).
 */
import { AUDIT_LOG_STREAM, CHAMBER_BUDGET_CATEGORY, MODEL_CALLS_CATEGORY, CHAMBER_SESSION_CATEGORY, DEBATE_CATEGORY, DIALECTIC_SESSION_CATEGORY, VOTING_CONFIG_CATEGORY, type DialecticPolicy, type TribunalPolicy } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import { budgetDecider, createChamberDecider, type ChamberPolicy } from '@agora/domain-chamber';
import { debateDecider } from '@agora/domain-debate';
import { DEFAULT_BREAKER_POLICY, defineBreakerPolicy } from '@agora/domain-common';
import { createDialecticDecider } from '@agora/domain-dialectic';
import { createAgentDecider, modelLedgerDecider } from '@agora/domain-registry';
import { createProposalDecider } from '@agora/domain-tribunal';
import { votingConfigDecider, votingSessionDecider } from '@agora/domain-voting';
import { logCheckpointDecider } from '@agora/eventsourcing';

export interface AuditPolicies {
  tribunal?: TribunalPolicy;
  dialectic?: DialecticPolicy;
  breakerRiskThreshold?: number;
  /** The chamber's policy (AGORA_CHAMBER_*, AGORA_PROVIDERS, AGORA_MODEL_PRICES): without it, chamber sessions are not decided again. */
  chamber?: ChamberPolicy;
}

// Deciders of different aggregates, held side by side: their command and event types differ.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDecider = Decider<Command, DomainEvent, any>;

export interface AggregateRules {
  /** The protocol, for the summary: registry, tribunal, voting, dialectic, audit. */
  protocol: string;
  decider: AnyDecider;
}

const AUDIT_CATEGORY = AUDIT_LOG_STREAM.split('-')[0]!;

/** Category → rules. A category without rules is reported (no decider to decide it again). */
export function aggregateRules(policies: AuditPolicies = {}): Map<string, AggregateRules> {
  const breaker = policies.breakerRiskThreshold === undefined ? DEFAULT_BREAKER_POLICY : defineBreakerPolicy({ riskThreshold: policies.breakerRiskThreshold });
  const rules: [string, AggregateRules][] = [
    ['agent', { protocol: 'registry', decider: createAgentDecider(breaker) as unknown as AnyDecider }],
    [MODEL_CALLS_CATEGORY, { protocol: 'model_calls', decider: modelLedgerDecider as unknown as AnyDecider }],
    ['proposal', { protocol: 'tribunal', decider: createProposalDecider(policies.tribunal) as unknown as AnyDecider }],
    ['voting_session', { protocol: 'voting', decider: votingSessionDecider as unknown as AnyDecider }],
    [VOTING_CONFIG_CATEGORY, { protocol: 'voting', decider: votingConfigDecider as unknown as AnyDecider }],
    [DIALECTIC_SESSION_CATEGORY, { protocol: 'dialectic', decider: createDialecticDecider(policies.dialectic) as unknown as AnyDecider }],
    [CHAMBER_BUDGET_CATEGORY, { protocol: 'chamber', decider: budgetDecider as unknown as AnyDecider }],
    [DEBATE_CATEGORY, { protocol: 'debate', decider: debateDecider as unknown as AnyDecider }],
    [AUDIT_CATEGORY, { protocol: 'audit', decider: logCheckpointDecider as unknown as AnyDecider }],
  ];
  if (policies.chamber) rules.push([CHAMBER_SESSION_CATEGORY, { protocol: 'chamber', decider: createChamberDecider(policies.chamber) as unknown as AnyDecider }]);
  return new Map(rules);
}
