/**
 * The two deliberation protocols: the chamber (seed 003, a panel of models from different
 * providers, blind then cross-examined, then an arbiter) and the crux debate (seed 004, two
 * debaters driven to a locked, falsifiable crux). Their figures come from the projections' read
 * models (computed at scrape time); their limits and targets are the recording rules of
 * deploy/prometheus/agora-rules.yml.
 */
import { dashboard, stat, timeseries } from './kit.js';

const commandsOf = (service: string) => ({ expr: `sum by (type, outcome) (rate(agora_commands_handled_total{service="${service}"}[5m]))`, legend: '{{type}} {{outcome}}' });

export const chamber = () =>
  dashboard({
    uid: 'agora-chamber',
    title: 'Agora / Chamber (seed 003)',
    description: "Multi-model deliberation: the seed's limits (sessions per day, the monthly budget), outcomes, the arbiter's own-provider win share, the panel's dynamics and each provider's calls.",
    rows: [
      [
        "Seed 003's limits",
        [
          stat('Sessions today', "Sessions that passed today's (UTC) budget check; the chamber refuses more once the daily limit is reached.", 'short', { expr: 'max(agora_chamber_day_sessions{kind="reserved"})' }),
          stat('Daily limit', 'Sessions allowed a day (AGORA_CHAMBER_SESSIONS_PER_DAY; seed 003: 10).', 'short', { expr: 'max(agora_chamber_day_sessions{kind="limit"})' }),
          stat('Monthly budget used', "This month's spent and reserved cost over the monthly budget; alerts at 80 % and 100 %.", 'percentunit', { expr: 'max(agora:chamber_budget_used:ratio)' }, [['green', null], ['yellow', 0.8], ['red', 1]]),
          stat('Arbiter own-provider win share', "Consensus syntheses of the window resting on the arbiter's own provider's answer; seed 003: at most 50 % (empty under the minimum sample).", 'percentunit', { expr: 'max(agora_chamber_arbiter_own_provider_win_ratio)' }, [['green', null], ['red', 0.5]]),
          stat('No consensus', 'Sessions of the window concluded without consensus: an honest outcome, but most of them means the questions do not suit the panel.', 'percentunit', { expr: 'max(agora_chamber_no_consensus_ratio)' }, [['green', null], ['yellow', 0.5]]),
          stat('Provider errors', 'Failed calls over all calls, worst provider, last hour.', 'percentunit', { expr: 'max(agora:chamber_call_errors:ratio_rate1h)' }, [['green', null], ['red', 0.1]]),
        ],
      ],
      [
        'Sessions and spend',
        [
          timeseries('Sessions by status', 'Chamber sessions by current status.', 'short', { expr: 'max by (status) (agora_chamber_sessions)', legend: '{{status}}' }),
          timeseries('Outcomes', 'Concluded sessions by outcome, all time.', 'short', { expr: 'max by (outcome) (agora_chamber_sessions_concluded_total)', legend: '{{outcome}}' }),
          timeseries("This month's spend", 'Spent, reserved (sessions not yet settled) and the monthly budget.', 'currencyUSD', { expr: 'max by (kind) (agora_chamber_month_cost)', legend: '{{kind}}' }),
          timeseries('Sessions today and the daily limit', "Today's sessions (UTC) and the limit.", 'short', { expr: 'max by (kind) (agora_chamber_day_sessions)', legend: '{{kind}}' }),
          timeseries('Cost per session', 'Median and 95th percentile of the cost of the concluded sessions.', 'currencyUSD', { expr: 'histogram_quantile(0.5, max by (le) (agora_chamber_session_cost_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.95, max by (le) (agora_chamber_session_cost_bucket))', legend: 'p95' }),
          timeseries('Wall time', 'Approval to outcome, median and 95th percentile.', 's', { expr: 'histogram_quantile(0.5, max by (le) (agora_chamber_session_wall_time_seconds_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.95, max by (le) (agora_chamber_session_wall_time_seconds_bucket))', legend: 'p95' }),
        ],
      ],
      [
        "The panel's dynamics",
        [
          timeseries('Divergence, cross-examination, lift', 'Blind phases that diverged, sessions cross-examined, and consensus outcomes that differ from the blind majority (the window).', 'percentunit', { expr: 'max(agora_chamber_divergence_ratio)', legend: 'divergence' }, { expr: 'max(agora_chamber_cross_examination_ratio)', legend: 'cross-examined' }, { expr: 'max(agora_chamber_lift_ratio)', legend: 'lift' }),
          timeseries('Arbiter', "The own-provider win share and the sessions it is counted over.", 'short', { expr: 'max(agora_chamber_arbiter_own_provider_win_ratio)', legend: 'own-provider win share' }, { expr: 'max(agora_chamber_arbiter_own_provider_sample)', legend: 'sample' }),
          timeseries('Conformity', 'Positions abandoned toward the blind majority in cross-examination, and those the arbiter or the human later chose.', 'short', { expr: 'max(agora_chamber_conformity_changes_total)', legend: 'abandoned toward the majority' }, { expr: 'max(agora_chamber_conformity_abandoned_chosen_total)', legend: 'abandoned, later chosen' }),
        ],
      ],
      [
        'Providers',
        [
          timeseries('Calls by provider', 'Model calls by provider and result, all time (retries included).', 'short', { expr: 'max by (provider, result) (agora_chamber_calls_total)', legend: '{{provider}} {{result}}' }),
          timeseries('Provider error rate', 'Failed over all calls, per provider, last hour; the SLO is under 10 %.', 'percentunit', { expr: 'max by (provider) (agora:chamber_call_errors:ratio_rate1h)', legend: '{{provider}}' }),
          timeseries('Failed calls by kind', 'http, timeout, network, invalid_output, interrupted...', 'short', { expr: 'max by (provider, kind) (agora_chamber_call_errors_total)', legend: '{{provider}} {{kind}}' }),
          timeseries('Call latency p95', '95th percentile of each call, per provider.', 's', { expr: 'histogram_quantile(0.95, max by (provider, le) (agora_chamber_call_latency_seconds_bucket))', legend: '{{provider}}' }),
          timeseries('Chamber commands', 'Commands of the chamber service per second, by type and outcome.', 'reqps', commandsOf('chamber')),
        ],
      ],
    ],
  });

export const debate = () =>
  dashboard({
    uid: 'agora-debate',
    title: 'Agora / Crux debate (seed 004)',
    description: "Two debaters driven to a locked, falsifiable crux: outcomes, crux-lock attempts, steelman grading, cheap concessions, the moderator's interventions, and the seed's cost and time targets.",
    rows: [
      [
        "Seed 004's targets",
        [
          stat('First steelmans ACCURATE', 'First steelmans of each pair graded ACCURATE by their target; seed 004: above 90 % the grading is too lax.', 'percentunit', { expr: 'max(agora_debate_first_time_accurate_ratio)' }, [['green', null], ['red', 0.9]]),
          stat('Crux-lock success', 'Lock attempts that passed the gate, all time.', 'percentunit', { expr: 'max(agora_debate_lock_attempts_total{result="passed"}) / max(sum by (instance) (agora_debate_lock_attempts_total))' }, [['red', null], ['green', 0.25]]),
          stat('Unresolved', 'Completed debates that ended UNRESOLVED, all time.', 'percentunit', { expr: 'max(agora_debate_completed_debates_total{outcome="unresolved"}) / max(sum by (instance) (agora_debate_completed_debates_total))' }, [['green', null], ['red', 0.33]]),
          stat('Cheap concessions', "Concessions that left the conceder's TopClaim unchanged (fake agreement), all time.", 'percentunit', { expr: 'max(agora_debate_cheap_concessions_total) / max(agora_debate_concessions_total)' }, [['green', null], ['red', 0.5]]),
          stat('Duration p95', 'Opening to completion; seed 004: under 2 minutes.', 's', { expr: 'histogram_quantile(0.95, max by (le) (agora_debate_duration_seconds_bucket))' }, [['green', null], ['red', 120]]),
          stat('Cost p95', 'Model cost per completed debate; seed 004: under $0.50.', 'currencyUSD', { expr: 'histogram_quantile(0.95, max by (le) (agora_debate_cost_usd_bucket))' }, [['green', null], ['red', 0.5]]),
        ],
      ],
      [
        'Debates',
        [
          timeseries('Debates', 'Open debates, and completed ones by outcome.', 'short', { expr: 'max(agora_debate_open_debates)', legend: 'open' }, { expr: 'max by (outcome) (agora_debate_completed_debates_total)', legend: '{{outcome}}' }),
          timeseries('Crux-lock attempts', 'Lock attempts by result, all time.', 'short', { expr: 'max by (result) (agora_debate_lock_attempts_total)', legend: '{{result}}' }),
          timeseries('Steelmans', 'First steelmans of each pair graded, and of those graded ACCURATE.', 'short', { expr: 'max(agora_debate_first_steelmans_graded_total)', legend: 'graded' }, { expr: 'max(agora_debate_first_steelmans_accurate_total)', legend: 'ACCURATE' }),
          timeseries('Concessions', 'Concessions in the evidence stage, and the cheap ones.', 'short', { expr: 'max(agora_debate_concessions_total)', legend: 'concessions' }, { expr: 'max(agora_debate_cheap_concessions_total)', legend: 'cheap' }),
          timeseries("The moderator's interventions", 'By kind: lock prompts, forced binary framing, proposed falsifiers, orbiting, horizon mismatch.', 'short', { expr: 'max by (kind) (agora_debate_moderator_interventions_total)', legend: '{{kind}}' }),
          timeseries('Duration', 'Opening to completion of the completed debates, median and 95th percentile; seed 004: under 2 minutes.', 's', { expr: 'histogram_quantile(0.5, max by (le) (agora_debate_duration_seconds_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.95, max by (le) (agora_debate_duration_seconds_bucket))', legend: 'p95' }),
          timeseries('Cost', 'Model cost of the completed debates, median and 95th percentile; seed 004: under $0.50.', 'currencyUSD', { expr: 'histogram_quantile(0.5, max by (le) (agora_debate_cost_usd_bucket))', legend: 'p50' }, { expr: 'histogram_quantile(0.95, max by (le) (agora_debate_cost_usd_bucket))', legend: 'p95' }),
          timeseries('Debate commands', 'Commands of the debate service per second, by type and outcome.', 'reqps', commandsOf('debate')),
        ],
      ],
    ],
  });
