/**
 * One dashboard per protocol: what its seed asks to watch, from the projections' read-model
 * figures (computed at scrape time) and the commands of its services. The chamber and the debate
 * add theirs here as their services land (see PROTOCOL_DASHBOARDS in index.ts).
 */
import { dashboard, stat, timeseries, type Steps } from './kit.js';

/** The seed's bands for a challenge rate: rubber-stamping under 20 %, the 20-40 % target, tolerated to 60 %, overhead above. */
const CHALLENGE_BANDS: Steps = [
  ['red', null],
  ['green', 0.2],
  ['yellow', 0.4],
  ['red', 0.6],
];
const commandsOf = (services: string) => ({ expr: `sum by (type, outcome) (rate(agora_commands_handled_total{service=~"${services}"}[5m]))`, legend: '{{type}} {{outcome}}' });

export const tribunal = () =>
  dashboard({
    uid: 'agora-tribunal',
    title: 'Agora / Tribunal (seed 000)',
    description: 'Proposals challenged by orthogonal constitutions before anyone acts: the challenge rate and its bands, coverage, rounds, deadlocks and provenance.',
    rows: [
      [
        'Health',
        [
          stat('Challenge rate', 'Proposals of the window reviewed and challenged by at least one objection. Seed 000: 20-40 %; under 20 % rubber-stamping, over 60 % overhead.', 'percentunit', { expr: 'max(agora_tribunal_challenge_rate_ratio)' }, CHALLENGE_BANDS),
          stat('Under-covered proposals', 'Proposals whose explicit reviews cover fewer than 3 constitutions (seed 000: every proposal by at least 3).', 'short', { expr: 'max(agora_tribunal_under_covered_proposals)' }, [['green', null], ['red', 1]]),
          stat('Open objections', 'Objections blocking a proposal now, until a revision answers them or their author withdraws them.', 'short', { expr: 'max(agora_tribunal_open_objections)' }),
          stat('Proceeded despite objections', 'Executions of proposals the tribunal had not approved, all time.', 'short', { expr: 'max(agora_tribunal_proceeded_despite_objections_total)' }, [['green', null], ['red', 1]]),
        ],
      ],
      [
        'Challenge rate',
        [
          timeseries('Challenge rate and its bands', 'The challenge rate of the window beside the seed\'s bands (0/1).', 'percentunit', { expr: 'max(agora_tribunal_challenge_rate_ratio)', legend: 'challenge rate' }, { expr: 'max(agora_tribunal_rubber_stamping)', legend: 'rubber-stamping (under 20 %)' }, { expr: 'max(agora_tribunal_overhead)', legend: 'overhead (over 60 %)' }),
          timeseries('Proposals of the window', 'Submitted, reviewed and challenged proposals of the window: the terms of the challenge rate.', 'short', { expr: 'max by (stage) (agora_tribunal_window_proposals)', legend: '{{stage}}' }),
        ],
      ],
      [
        'Proposals and rounds',
        [
          timeseries('Proposals by status', 'review, escalated, approved, rejected, withdrawn.', 'short', { expr: 'max by (status) (agora_tribunal_proposals)', legend: '{{status}}' }),
          timeseries('Rounds to resolution', 'Resolved proposals by the rounds they took (cumulative buckets). Seed 000: objections resolved within 2-3 rounds.', 'short', { expr: 'max by (le) (agora_tribunal_resolution_rounds_bucket)', legend: '≤ {{le}} rounds' }),
          timeseries('Decisions', 'Final statuses by outcome and by who decided.', 'short', { expr: 'max by (outcome, decided_by) (agora_tribunal_decisions_total)', legend: '{{outcome}} by {{decided_by}}' }),
          timeseries('Escalations and silence', 'Deadlocks and coverage escalations to a human, operator decisions, and reviews deemed approved at the deadline.', 'short', { expr: 'max(agora_tribunal_deadlocks_escalated_total)', legend: 'deadlocks' }, { expr: 'max(agora_tribunal_coverage_escalations_total)', legend: 'coverage escalations' }, { expr: 'max by (decision) (agora_tribunal_operator_decisions_total)', legend: 'operator: {{decision}}' }, { expr: 'max(agora_tribunal_deemed_approvals_total)', legend: 'deemed approvals' }),
        ],
      ],
      [
        'Calibration',
        [
          stat('Outcomes reported', 'Executed proposals whose outcome the proposer or an operator reported, by outcome (worked, failed), all time.', 'short', { expr: 'max by (outcome) (agora_tribunal_outcomes_total)', legend: '{{outcome}}' }),
          timeseries(
            'Objections upheld, by reviewer',
            'Per reviewer and constitution: objections upheld (answered by a revision, or on a proposal reported failed) over those with a fate (not pending). docs/metrics.md, Calibration.',
            'percentunit',
            { expr: 'sum by (reviewer, constitution) (agora_tribunal_reviewer_objections{fate=~"upheld_by_revision|upheld_by_outcome"}) / sum by (reviewer, constitution) (agora_tribunal_reviewer_objections{fate!="pending"})', legend: '{{reviewer}} ({{constitution}})' },
          ),
          timeseries('Objections by fate', 'Objections by reviewer, constitution and fate: upheld by a revision, upheld by a failed outcome, not upheld (the proposal worked), pending.', 'short', {
            expr: 'max by (reviewer, constitution, fate) (agora_tribunal_reviewer_objections) > 0',
            legend: '{{reviewer}} ({{constitution}}): {{fate}}',
          }),
          timeseries('Approvals of proposals that failed', "Per reviewer and constitution: proposals reported failed on which the reviewer's final explicit verdict was approve.", 'short', {
            expr: 'max by (reviewer, constitution) (agora_tribunal_reviewer_final_verdicts{verdict="approve",outcome="failed"})',
            legend: '{{reviewer}} ({{constitution}})',
          }),
        ],
      ],
      [
        'Services',
        [
          timeseries('Tribunal commands', 'Commands of the proposal and tribunal services per second, by type and outcome.', 'reqps', commandsOf('proposal|tribunal')),
          timeseries('Round deadlines', 'How late the most overdue review-round deadline is, and the tribunal reactor\'s lag behind the log.', 's', { expr: 'max by (scheduler) (agora_deadline_overdue_seconds{scheduler="tribunal-rounds"})', legend: 'overdue ({{scheduler}})' }, { expr: 'max by (reactor) (agora_reactor_lag_seconds{reactor="tribunal-rounds"})', legend: 'reactor lag ({{reactor}})' }),
        ],
      ],
    ],
  });

export const voting = () =>
  dashboard({
    uid: 'agora-voting',
    title: 'Agora / Voting (seed 002)',
    description: 'Weighted validator votes on high-risk actions: sessions, consensus, the share that needs a human (HITL) and the time to decision.',
    rows: [
      [
        'Health',
        [
          stat('HITL rate', 'Concluded sessions whose recommendation required a human, all time.', 'percentunit', { expr: 'max(agora_voting_escalation_ratio)' }, [['green', null], ['yellow', 0.2], ['red', 0.5]]),
          stat('Awaiting an operator', 'Escalated sessions no operator has decided yet.', 'short', { expr: 'max(agora_voting_sessions_awaiting_operator)' }, [['green', null], ['yellow', 1]]),
          stat('Time to decision p95', 'Creation to decision or expiry, 95th percentile over every concluded session; the seed\'s timeout is 5 minutes.', 's', { expr: 'histogram_quantile(0.95, max by (le) (agora_voting_time_to_decision_seconds_bucket))' }, [['green', null], ['red', 300]]),
          stat('Votes', 'Validator votes received, all time.', 'short', { expr: 'sum(max by (decision) (agora_voting_votes_total))' }),
        ],
      ],
      [
        'Sessions',
        [
          timeseries('Sessions by status', 'pending, voting, decided, expired, cancelled.', 'short', { expr: 'max by (status) (agora_voting_sessions)', legend: '{{status}}' }),
          timeseries('Concluded by consensus', 'Decided or expired sessions by consensus and recommended decision.', 'short', { expr: 'max by (consensus, outcome) (agora_voting_concluded_sessions_total) > 0', legend: '{{consensus}}: {{outcome}}' }),
          timeseries('Escalations to a human', 'Sessions that required a human, by the rule that escalated them; operator decisions.', 'short', { expr: 'max by (reason) (agora_voting_escalations_total)', legend: '{{reason}}' }, { expr: 'max by (decision) (agora_voting_operator_decisions_total)', legend: 'operator: {{decision}}' }),
          timeseries('Time to decision', 'Median and 95th percentile over every concluded session.', 's', { expr: 'histogram_quantile(0.5, max by (le) (agora_voting_time_to_decision_seconds_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.95, max by (le) (agora_voting_time_to_decision_seconds_bucket))', legend: 'p95' }),
          timeseries('Votes by decision', 'approve, deny, abstain.', 'short', { expr: 'max by (decision) (agora_voting_votes_total)', legend: '{{decision}}' }),
          timeseries(
            'Validator agreement with the final decision',
            "Per validator: approve or deny votes equal to the session's final decision (the operator's when a human decided) over those on sessions with a final decision. Abstentions and undecided sessions do not count.",
            'percentunit',
            { expr: 'sum by (validator) (agora_voting_validator_votes{agreement="agreed"}) / sum by (validator) (agora_voting_validator_votes{agreement=~"agreed|disagreed"})', legend: '{{validator}}' },
          ),
          timeseries('Voting commands', 'Commands of the voting service per second, by type and outcome.', 'reqps', commandsOf('voting')),
        ],
      ],
    ],
  });

export const dialectic = () =>
  dashboard({
    uid: 'agora-dialectic',
    title: 'Agora / Dialectic recovery (seed 001)',
    description: "Circuit-breaker recovery by dialectic: the seed's success metrics (90 % within 5 minutes, under 5 % to a quorum, 0 collusion, under 10 % repeat failures, 100 % verifiable) and the escalation ladder.",
    rows: [
      [
        "Seed 001's success metrics",
        [
          stat('Resolved within 5 minutes', 'Sessions of the window resolved within 5 minutes of the pause; the seed wants 90 %.', 'percentunit', { expr: 'max(agora_dialectic_resolved_within_target_ratio)' }, [['red', null], ['green', 0.9]]),
          stat('Escalated to a quorum', 'Sessions of the window that went to a validator quorum; the seed wants under 5 %.', 'percentunit', { expr: 'max(agora_dialectic_quorum_escalation_ratio)' }, [['green', null], ['red', 0.05]]),
          stat('Collusion flags', 'Pairs of agents that reviewed each other repeatedly in the window; the seed wants 0.', 'short', { expr: 'max(agora_dialectic_collusion_flags)' }, [['green', null], ['red', 1]]),
          stat('Repeat failures', 'Resolved recoveries of the window whose agent relapsed; the seed wants under 10 %.', 'percentunit', { expr: 'max(agora_dialectic_repeat_failure_ratio)' }, [['green', null], ['red', 0.1]]),
          stat('Verifiable resolutions', 'Resolutions whose signatures verify from the log; the seed wants 100 %.', 'percentunit', { expr: 'min(agora_dialectic_verifiable_resolutions_ratio)' }, [['red', null], ['green', 1]]),
          stat('Escalated at least once', 'Sessions of the window that climbed the ladder at least once.', 'percentunit', { expr: 'max(agora_dialectic_escalation_ratio)' }),
        ],
      ],
      [
        'Sessions',
        [
          timeseries('Sessions by status', 'Recovery sessions by current status.', 'short', { expr: 'max by (status) (agora_dialectic_sessions) > 0', legend: '{{status}}' }, { expr: 'max by (stage) (agora_dialectic_window_sessions)', legend: 'window: {{stage}}' }),
          timeseries('Time to resolution', 'Pause to resolution, median and 90th percentile over every resolved session.', 's', { expr: 'histogram_quantile(0.5, max by (le) (agora_dialectic_time_to_resolution_seconds_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.9, max by (le) (agora_dialectic_time_to_resolution_seconds_bucket))', legend: 'p90' }),
          timeseries('Resolved by', 'Resolutions by who settled them: the dialectic, a tie-breaker, a quorum, an operator.', 'short', { expr: 'max by (decided_by) (agora_dialectic_resolved_sessions_total)', legend: '{{decided_by}}' }),
          timeseries('Escalation ladder', 'Escalations by tier; hard-limit blocks, phase timeouts, relapses and audit verdicts.', 'short', { expr: 'max by (tier) (agora_dialectic_escalations_total)', legend: '{{tier}}' }, { expr: 'max(agora_dialectic_hard_limit_blocks_total)', legend: 'hard-limit blocks' }, { expr: 'max(agora_dialectic_phase_timeouts_total)', legend: 'phase timeouts' }, { expr: 'max(agora_dialectic_relapses_total)', legend: 'relapses' }, { expr: 'max by (verdict) (agora_dialectic_audits_total)', legend: 'audit: {{verdict}}' }),
          timeseries('Dialectic commands', 'Commands of the dialectic service per second, by type and outcome.', 'reqps', commandsOf('dialectic')),
          timeseries('Phase deadlines', 'How late the most overdue dialectic deadline is, and the dialectic reactors\' lag behind the log.', 's', { expr: 'max by (scheduler) (agora_deadline_overdue_seconds{scheduler=~"dialectic.*"})', legend: 'overdue ({{scheduler}})' }, { expr: 'max by (reactor) (agora_reactor_lag_seconds{reactor=~"dialectic.*"})', legend: 'reactor lag ({{reactor}})' }),
        ],
      ],
    ],
  });
