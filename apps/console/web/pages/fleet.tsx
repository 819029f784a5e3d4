/** Fleet: every agent with its roles, trust, health and risk, and whether it is paused (with its recovery) or disabled. */
import type { AgentView } from '@agora/contracts';
import { usePagedQuery } from '../lib/api';
import type { ConsolePage, PageProps } from '../page';
import { Badge, Empty, ErrorNote, Loading, Meter, Section, ShowMore, Time } from '../ui';

/**
 * Health and risk are those of the agent's last health report. An agent resumed after a recovery and not
 * reported on since still shows the figures that paused it: they say so instead of reading as current.
 */
function staleSinceResume(agent: AgentView): string | undefined {
  const resume = agent.breaker.lastResume;
  if (agent.breaker.state === 'open' || !resume) return undefined;
  const reported = agent.breaker.lastReportAt;
  return reported === null || reported <= resume.resumedAt ? 'the report that paused it: none since its resume' : undefined;
}

function StatusCell(props: { agent: AgentView }) {
  const { agent } = props;
  if (agent.status === 'disabled') return <Badge tone="bad">disabled</Badge>;
  if (agent.breaker.state === 'open')
    return (
      <span class="stack">
        <Badge tone="bad">paused</Badge>
        {agent.breaker.sessionId ? <a href={`/dialectic/${encodeURIComponent(agent.breaker.sessionId)}`}>recovery</a> : null}
      </span>
    );
  if (staleSinceResume(agent))
    return (
      <span class="stack">
        <Badge tone="good">active</Badge>
        <span class="small muted">resumed, no report since</span>
        {agent.breaker.lastResume ? <a href={`/dialectic/${encodeURIComponent(agent.breaker.lastResume.sessionId)}`}>recovery</a> : null}
      </span>
    );
  return <Badge tone="good">active</Badge>;
}

function Fleet(props: PageProps) {
  // The first 100 agents in id order, 100 more at each "Show more": a fleet of 100,000 shows at once.
  const agents = usePagedQuery<AgentView>('/v1/registry/agents', 'agents', { includeDisabled: true }, ['agent']);
  const selected = props.search.get('agent');
  const list = agents.data?.items ?? [];
  const more = agents.data?.more ?? false;
  const paused = list.filter((a) => a.breaker.state === 'open').length;
  const disabled = list.filter((a) => a.status === 'disabled').length;
  return (
    <>
      <p class="lede">
        {more ? `first ${list.length}` : list.length} agents · {paused} paused · {disabled} disabled{more ? ' among them' : ''}
      </p>
      <Section title="Agents">
        <ErrorNote error={agents.error} what="the agents" />
        {agents.loading && !agents.data ? <Loading what="agents" /> : null}
        {agents.data && list.length === 0 ? <Empty>No agents are registered yet.</Empty> : null}
        {list.length > 0 ? (
          <div class="table-wrap">
            <table class="responsive">
              <caption class="sr-only">Registered agents</caption>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Roles</th>
                  <th scope="col">Trust</th>
                  <th scope="col">Health</th>
                  <th scope="col">Risk</th>
                  <th scope="col">Status</th>
                  <th scope="col">Registered</th>
                </tr>
              </thead>
              <tbody>
                {list.map((a) => (
                  <tr key={a.agentId} class={a.agentId === selected ? 'selected' : undefined} id={`agent-${a.agentId}`}>
                    <th scope="row" data-label="Agent">
                      <span class="strong">{a.agentId}</span>
                      {a.displayName && a.displayName !== a.agentId ? <span class="muted"> {a.displayName}</span> : null}
                      {a.constitutions.length > 0 ? <div class="small muted">constitutions: {a.constitutions.join(', ')}</div> : null}
                    </th>
                    <td data-label="Roles">
                      <span class="chips">
                        {a.roles.map((r) => (
                          <Badge key={r} tone="info">
                            {r}
                          </Badge>
                        ))}
                      </span>
                    </td>
                    <td data-label="Trust">
                      <Meter value={a.trustScore} max={1000} label={`trust of ${a.agentId}`} />
                    </td>
                    <td data-label="Health">
                      <Meter value={a.health} label={`health of ${a.agentId}`} stale={staleSinceResume(a)} />
                    </td>
                    <td data-label="Risk">
                      <Meter value={a.risk} invert label={`risk of ${a.agentId}`} stale={staleSinceResume(a)} />
                    </td>
                    <td data-label="Status">
                      <StatusCell agent={a} />
                    </td>
                    <td data-label="Registered">
                      <Time at={a.registeredAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <ShowMore list={agents.data} loading={agents.loading} onMore={agents.showMore} what="agents" />
      </Section>
    </>
  );
}

export const fleetPage: ConsolePage = { path: 'fleet', label: 'Fleet', title: 'Fleet', component: Fleet };
