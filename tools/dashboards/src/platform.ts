/** The platform under the protocols: processes, commands, the event store, reactors and deadlines, NATS. */
import { dashboard, stat, timeseries } from './kit.js';

export const platform = () =>
  dashboard({
    uid: 'agora-platform',
    title: 'Agora / Platform',
    description: "Every Agora process: commands by service and outcome, latency, the event store, reactors' and deadlines' lag, the following audit, NATS connections, the processes themselves.",
    rows: [
      [
        'Service-level objectives',
        [
          stat('Processes up', 'Agora processes Prometheus scrapes that answer (the agora job).', 'short', { expr: 'sum(up{job="agora"})' }),
          stat('Command failures', 'Failed commands (internal, unavailable, timeout, conflict) over all commands, 5 minutes, worst service; the objective is under 1 %.', 'percentunit', { expr: 'max(agora:commands_failed:ratio_rate5m)' }, [['green', null], ['red', 0.01]]),
          stat('Command latency p99', 'Worst service\'s 99th percentile over 5 minutes; the objective is under 1 s.', 's', { expr: 'max(agora:commands_duration_seconds:p99_rate5m)' }, [['green', null], ['red', 1]]),
          stat('Reactor lag', 'The most lagging reactor (or relay): age of the event it is handling; 0 when caught up. The objective is under 30 s.', 's', { expr: 'max(agora:reactor_lag_seconds:max)' }, [['green', null], ['red', 30]]),
        ],
      ],
      [
        'Commands',
        [
          timeseries('Commands by service and outcome', 'Per second: accepted, refused (the command was wrong), failed (the platform failed).', 'reqps', { expr: 'sum by (service, outcome) (rate(agora_commands_handled_total[5m]))', legend: '{{service}} {{outcome}}' }),
          timeseries('Refusals by code', 'Refused commands per second, by error code (invalid_command, forbidden, illegal_state...).', 'reqps', { expr: 'sum by (code) (rate(agora_commands_handled_total{outcome="refused"}[5m]))', legend: '{{code}}' }),
          timeseries('Command latency', 'p50 and p99 by service over 5 minutes: verify, load, decide, append, reply.', 's', { expr: 'histogram_quantile(0.99, sum by (service, le) (rate(agora_commands_duration_seconds_bucket[5m])))', legend: 'p99 {{service}}' }, { expr: 'histogram_quantile(0.5, sum by (service, le) (rate(agora_commands_duration_seconds_bucket[5m])))', legend: 'p50 {{service}}' }),
          timeseries('Failure ratio', 'Failed over all commands by service, 5 minutes (recording rule agora:commands_failed:ratio_rate5m).', 'percentunit', { expr: 'agora:commands_failed:ratio_rate5m', legend: '{{service}}' }),
          timeseries('Gateway requests', 'HTTP requests per second by status.', 'reqps', { expr: 'sum by (status) (rate(agora_gateway_http_requests_total[5m]))', legend: '{{status}}' }),
        ],
      ],
      [
        'Event store',
        [
          timeseries('Append latency', 'p50 and p99 of one append (one commit), by adapter, over 5 minutes.', 's', { expr: 'histogram_quantile(0.99, sum by (adapter, le) (rate(agora_store_append_duration_seconds_bucket[5m])))', legend: 'p99 {{adapter}}' }, { expr: 'histogram_quantile(0.5, sum by (adapter, le) (rate(agora_store_append_duration_seconds_bucket[5m])))', legend: 'p50 {{adapter}}' }),
          timeseries('Appends by outcome', 'Appends per second: ok, conflict (wrong expected revision, retried), failed.', 'ops', { expr: 'sum by (adapter, outcome) (rate(agora_store_appends_total[5m]))', legend: '{{adapter}} {{outcome}}' }),
          timeseries('Stream read latency', 'p99 of one stream read, by adapter, over 5 minutes.', 's', { expr: 'histogram_quantile(0.99, sum by (adapter, le) (rate(agora_store_read_duration_seconds_bucket[5m])))', legend: 'p99 {{adapter}}' }),
          timeseries('Streams with two commits at one revision', 'Stream reads refused over 10 minutes because two commits claim one revision (alert AgoraLogDuplicateRevision; docs/cluster.md). Always 0 on a correct server.', 'short', { expr: 'sum by (adapter) (increase(agora_store_duplicate_revisions_total[10m]))', legend: '{{adapter}}' }),
        ],
      ],
      [
        'Reactors and deadlines',
        [
          timeseries('Reactor lag', 'Age of the event each reactor (and the relay) is handling now; 0 when caught up.', 's', { expr: 'max by (reactor) (agora_reactor_lag_seconds)', legend: '{{reactor}}' }),
          timeseries('Reactor delay p99', 'Commit of an event to its handling, 99th percentile over 5 minutes, by reactor.', 's', { expr: 'histogram_quantile(0.99, sum by (reactor, le) (rate(agora_reactor_delay_seconds_bucket[5m])))', legend: '{{reactor}}' }),
          timeseries('Deadlines overdue', 'How late the most overdue pending deadline of each scheduler is.', 's', { expr: 'max by (scheduler) (agora_deadline_overdue_seconds)', legend: '{{scheduler}}' }),
          timeseries('Deadline lateness p99', 'Due time to firing, 99th percentile over the last hour, by scheduler (no value: nothing fired).', 's', { expr: 'histogram_quantile(0.99, sum by (scheduler, le) (rate(agora_deadline_lateness_seconds_bucket[1h])))', legend: '{{scheduler}}' }),
        ],
      ],
      [
        'Audit (agora audit --follow)',
        [
          stat('Audit findings', 'Findings of the following audit over the last hour, every check (alert AgoraAuditFinding). 0 on a faithful log.', 'short', { expr: 'sum(increase(agora_audit_findings_total[1h]))' }, [['green', null], ['red', 1]]),
          stat('Audit lag', 'Age of the oldest event the audit has not verified yet; 0 when it has verified the log\'s end. The objective is under a minute (alert AgoraAuditBehind).', 's', { expr: 'max(agora_audit_lag_seconds)' }, [['green', null], ['red', 60]]),
          timeseries('Audit position', 'Events of the log the audit verified (counted from its start), and events stored after them (counted up to 1,000).', 'short', { expr: 'max(agora_audit_verified_position_events)', legend: 'verified' }, { expr: 'max(agora_audit_lag_events)', legend: 'not verified yet' }),
          timeseries('Audit findings by check', 'Findings since the audit started, by check (envelope, signature, authorization, chain, decision, model_calls, checkpoint, continuation).', 'short', { expr: 'sum by (check) (agora_audit_findings_total)', legend: '{{check}}' }),
        ],
      ],
      [
        'NATS',
        [
          timeseries('Reconnects and disconnects', "Of the processes' NATS connections (the client, and each service's), all time.", 'short', { expr: 'sum by (connection) (agora_nats_reconnects_total)', legend: 'reconnects {{connection}}' }, { expr: 'sum by (connection) (agora_nats_disconnects_total)', legend: 'disconnects {{connection}}' }),
          timeseries('Slow consumers', 'Slow-consumer events (the client dropped messages of a subscription that fell behind), all time.', 'short', { expr: 'sum by (connection) (agora_nats_slow_consumer_events_total)', legend: '{{connection}}' }),
        ],
      ],
      [
        'Processes',
        [
          timeseries('CPU', 'CPU seconds per second of each process.', 'percentunit', { expr: 'rate(process_cpu_seconds_total{job="agora"}[5m])', legend: '{{instance}}' }),
          timeseries('Heap used', 'V8 heap used by each process.', 'bytes', { expr: 'nodejs_heap_size_used_bytes{job="agora"}', legend: '{{instance}}' }),
          timeseries('Event loop lag p99', 'Event loop delay of each process.', 's', { expr: 'nodejs_eventloop_lag_p99_seconds{job="agora"}', legend: '{{instance}}' }),
          timeseries('Up', 'Whether Prometheus could scrape each process.', 'short', { expr: 'up{job="agora"}', legend: '{{instance}}' }),
        ],
      ],
    ],
  });
