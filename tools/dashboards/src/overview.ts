/** The first dashboard a person opens: is Agora up, is it working, what waits for a human, how each protocol is doing. */
import { dashboard, stat, timeseries } from './kit.js';

export const overview = () =>
  dashboard({
    uid: 'agora-overview',
    title: 'Agora / Overview',
    description: 'Agora at a glance: processes, commands, firing alerts, what waits for a human, and each protocol\'s headline figure. The other Agora dashboards are in the "Agora" menu.',
    rows: [
      [
        'Agora',
        [
          stat('Processes up', 'Agora processes that answer Prometheus.', 'short', { expr: 'sum(up{job="agora"})' }),
          stat('Commands per second', 'Every command answered, all services, over 5 minutes.', 'reqps', { expr: 'sum(rate(agora_commands_handled_total[5m]))' }),
          stat('Firing alerts', 'Alerts of deploy/prometheus/agora-rules.yml firing now.', 'short', { expr: 'count(ALERTS{alertstate="firing"}) or vector(0)' }, [['green', null], ['red', 1]]),
          stat('Command failures', 'Failed over all commands, worst service, 5 minutes.', 'percentunit', { expr: 'max(agora:commands_failed:ratio_rate5m)' }, [['green', null], ['red', 0.01]]),
        ],
      ],
      [
        'Protocols',
        [
          stat('Tribunal challenge rate', 'Seed 000 targets 20-40 %.', 'percentunit', { expr: 'max(agora_tribunal_challenge_rate_ratio)' }, [['red', null], ['green', 0.2], ['yellow', 0.4], ['red', 0.6]]),
          stat('Voting HITL rate', 'Concluded voting sessions that needed a human.', 'percentunit', { expr: 'max(agora_voting_escalation_ratio)' }, [['green', null], ['yellow', 0.2], ['red', 0.5]]),
          stat('Recoveries within 5 minutes', 'Seed 001 wants 90 %.', 'percentunit', { expr: 'max(agora_dialectic_resolved_within_target_ratio)' }, [['red', null], ['green', 0.9]]),
          stat('Verifiable resolutions', 'Seed 001 wants 100 %.', 'percentunit', { expr: 'min(agora_dialectic_verifiable_resolutions_ratio)' }, [['red', null], ['green', 1]]),
          stat('Chamber budget used', "This month's chamber spend and reservations over the monthly budget (seed 003).", 'percentunit', { expr: 'max(agora:chamber_budget_used:ratio)' }, [['green', null], ['yellow', 0.8], ['red', 1]]),
          stat('Chamber arbiter own-provider share', 'Seed 003 wants at most 50 % (empty under the minimum sample).', 'percentunit', { expr: 'max(agora_chamber_arbiter_own_provider_win_ratio)' }, [['green', null], ['red', 0.5]]),
          stat('Debate steelmans ACCURATE first time', 'Seed 004: above 90 % the grading is too lax.', 'percentunit', { expr: 'max(agora_debate_first_time_accurate_ratio)' }, [['green', null], ['red', 0.9]]),
          stat('Debates converged', 'Completed crux debates with a validated crux, all time.', 'short', { expr: 'max(agora_debate_completed_debates_total{outcome="converged"})' }),
        ],
      ],
      [
        'Waiting for a human',
        [
          timeseries(
            'Human decisions waiting',
            'Escalated proposals, voting sessions awaiting an operator, recoveries awaiting an operator, chamber sessions awaiting approval.',
            'short',
            { expr: 'max(agora_tribunal_proposals{status="escalated"})', legend: 'tribunal escalations' },
            { expr: 'max(agora_voting_sessions_awaiting_operator)', legend: 'voting sessions' },
            { expr: 'max(agora_dialectic_sessions{status="awaiting_operator"})', legend: 'recoveries' },
            { expr: 'max(agora_chamber_sessions{status="awaiting_approval"})', legend: 'chamber approvals' },
          ),
          timeseries('Commands by service', 'Per second, by service and outcome.', 'reqps', { expr: 'sum by (service, outcome) (rate(agora_commands_handled_total[5m]))', legend: '{{service}} {{outcome}}' }),
        ],
      ],
    ],
  });
