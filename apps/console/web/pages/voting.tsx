/**
 * Voting (seed 002): sessions with their validators, each vote (reasoning, confidence, weight),
 * the consensus, the recommendation and whether a human must decide (HITL).
 */
import type { VotingSessionSummary, VotingSessionView, VotingStats } from '@agora/contracts';
import { usePagedQuery, useQuery } from '../lib/api';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, Empty, ErrorNote, Facts, Loading, Meter, percent, Section, ShowMore, Status, Tile, Time, useScrollIntoViewOnChange } from '../ui';

const LIVE = ['voting_session', 'voting_config'];

/** A session whose votes are in but whose recommendation needs a person is not decided yet: it says so in place of its status. */
function hitl(s: { awaitingOperator: boolean; status: string }, view?: VotingSessionView) {
  if (s.awaitingOperator) return <Badge tone="bad">{s.status === 'expired' ? 'expired: ' : 'votes in: '}waiting for a human</Badge>;
  if (view?.resolution) return <Badge tone="good">decided by {view.resolution.operator}</Badge>;
  return null;
}

function SessionList(props: { sessions: VotingSessionSummary[]; selected: string | undefined }) {
  return (
    <ul class="pick-list" aria-label="Voting sessions">
      {props.sessions.map((s) => (
        <li key={s.sessionId}>
          <a href={`/voting/${encodeURIComponent(s.sessionId)}`} aria-current={s.sessionId === props.selected ? 'true' : undefined}>
            <span class="pick-title">
              {s.actionType} <span class="muted small">for {s.requestingAgent}</span>
            </span>
            <span class="pick-meta">
              {s.awaitingOperator ? null : <Status value={s.status} />} <Badge tone={s.critical || s.riskLevel === 'critical' ? 'bad' : s.riskLevel === 'high' ? 'warn' : 'muted'}>{s.riskLevel} risk</Badge>
              <span class="muted small">
                {s.votesReceived}/{s.validators.length} votes
              </span>
              {hitl(s)}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

function SessionDetail(props: { sessionId: string }) {
  const session = useQuery<VotingSessionView>(`/v1/voting/sessions/${encodeURIComponent(props.sessionId)}`, {}, LIVE);
  const s = session.data;
  if (!s) return session.error ? <ErrorNote error={session.error} what={`session ${props.sessionId}`} /> : <Loading what="the session" />;
  const voteOf = (agentId: string) => s.votes.find((v) => v.validator === agentId);
  const r = s.recommendation;
  return (
    <div class="detail">
      <div class="card-head">
        <h2 id="session-title">
          {s.actionType} <span class="muted small">for {s.requestingAgent}</span>
        </h2>
        <span class="chips">
          {s.awaitingOperator ? null : <Status value={s.status} />}
          {hitl(s, s)}
        </span>
      </div>
      {s.summary ? <p>{s.summary}</p> : null}
      <Facts
        items={[
          ['Session', <code>{s.sessionId}</code>],
          ['Request', <code>{s.requestId}</code>],
          ['Risk', `${s.riskLevel}${s.critical && s.riskLevel !== 'critical' ? ' (critical)' : ''}`],
          ['Created by', <AgentName id={s.createdBy} />],
          ['Created', <Time at={s.createdAt} />],
          [s.concludedAt ? 'Concluded' : 'Deadline', <Time at={s.concludedAt ?? s.deadlineAt} />],
        ]}
      />
      <h3>Outcome</h3>
      {r ? (
        <div class="outcome">
          <Facts
            items={[
              ['Consensus', <Status value={s.consensus ?? r.consensus} label={(s.consensus ?? r.consensus).replace(/_/g, ' ')} />],
              ['Recommendation', <Status value={r.decision} />],
              ['Aggregate confidence', <Meter value={r.confidence} label="aggregate confidence" />],
              ['Human in the loop', r.requiresHitl ? <Badge tone="bad">requires a human{r.escalationReason ? `: ${r.escalationReason.replace(/_/g, ' ')}` : ''}</Badge> : <span class="muted">not required</span>],
            ]}
          />
          <ul class="small">
            {r.reasoning.map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
          {r.dissent.length > 0 ? (
            <details>
              <summary>Dissent ({r.dissent.length})</summary>
              <ul class="small">
                {r.dissent.map((line, i) => (
                  <li key={i}>{line}</li>
                ))}
              </ul>
            </details>
          ) : null}
          {s.tally ? (
            <p class="small muted">
              Tally: {s.tally.approve} approve ({s.tally.approveWeight.toFixed(2)}), {s.tally.deny} deny ({s.tally.denyWeight.toFixed(2)}), {s.tally.abstain} abstain; quorum {s.tally.quorum}
              {s.tally.weighted ? '; weights are trust/1000 × confidence' : ''}
            </p>
          ) : null}
          {s.resolution ? (
            <p>
              Human decision: <Status value={s.resolution.decision} /> by <AgentName id={s.resolution.operator} /> <Time at={s.resolution.resolvedAt} />: <q>{s.resolution.reason}</q>
            </p>
          ) : s.awaitingOperator ? (
            <p class="notice">
              Waiting for an operator: <a href="/inbox">decide in the inbox</a>.
            </p>
          ) : null}
        </div>
      ) : (
        <p class="muted">Collecting votes until <Time at={s.deadlineAt} />.</p>
      )}
      {s.cancellation ? (
        <p class="notice">
          Cancelled by <AgentName id={s.cancellation.cancelledBy} />: {s.cancellation.reason}
        </p>
      ) : null}
      <h3>Validators and votes</h3>
      <div class="table-wrap">
        <table class="responsive">
          <caption class="sr-only">Validators of the session and their votes</caption>
          <thead>
            <tr>
              <th scope="col">Validator</th>
              <th scope="col">Vote</th>
              <th scope="col">Confidence</th>
              <th scope="col">Weight</th>
              <th scope="col">Reasoning</th>
            </tr>
          </thead>
          <tbody>
            {s.validators.map((v) => {
              const vote = voteOf(v.agentId);
              return (
                <tr key={v.agentId}>
                  <th scope="row" data-label="Validator">
                    <AgentName id={v.agentId} /> <span class="muted small">{v.tier.toLowerCase()} · trust {v.trustScore}</span>
                  </th>
                  <td data-label="Vote">{vote ? <Status value={vote.decision} /> : <span class="muted">not yet</span>}</td>
                  <td data-label="Confidence">{vote ? <Meter value={vote.confidence} label={`confidence of ${v.agentId}`} /> : '–'}</td>
                  <td data-label="Weight">{vote ? vote.weight.toFixed(2) : '–'}</td>
                  <td data-label="Reasoning" class="wide">
                    {vote ? (
                      <>
                        {vote.reasoning}
                        {vote.riskAssessment ? <div class="small muted">risk: {vote.riskAssessment}</div> : null}
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Voting(props: PageProps) {
  const stats = useQuery<VotingStats>('/v1/voting/stats', {}, LIVE);
  const list = usePagedQuery<VotingSessionSummary>('/v1/voting/sessions', 'sessions', {}, LIVE);
  const sessions = list.data?.items ?? [];
  const detailRef = useScrollIntoViewOnChange(props.rest[0]);
  const selected = props.rest[0] ?? sessions[0]?.sessionId;
  const st = stats.data;
  return (
    <>
      <ErrorNote error={stats.error} what="the voting figures" />
      {st ? (
        <div class="tiles" aria-label="Voting figures">
          <Tile label="sessions" value={st.totalSessions} />
          <Tile label="collecting votes" value={st.pendingSessions} />
          <Tile label="waiting for a human" value={st.awaitingOperator} />
          <Tile label="HITL rate" value={percent(st.escalationRate)} />
          <Tile label="mean time to decision" value={st.averageVotingTime === null ? '–' : `${(st.averageVotingTime / 1000).toFixed(1)} s`} />
          <Tile label="approve / deny / escalate" value={`${st.recommendations.approve} / ${st.recommendations.deny} / ${st.recommendations.escalate}`} />
        </div>
      ) : null}
      <div class="split">
        <Section title="Sessions">
          <ErrorNote error={list.error} what="the sessions" />
          {list.loading && !list.data ? <Loading what="sessions" /> : null}
          {list.data && sessions.length === 0 ? <Empty>No voting sessions yet.</Empty> : <SessionList sessions={sessions} selected={selected} />}
          <ShowMore list={list.data} loading={list.loading} onMore={list.showMore} what="sessions" />
        </Section>
        <section class="card" ref={detailRef} aria-labelledby="session-title">
          {selected ? <SessionDetail key={selected} sessionId={selected} /> : <Empty>Select a session.</Empty>}
        </section>
      </div>
    </>
  );
}

export const votingPage: ConsolePage = { path: 'voting', label: 'Voting', title: 'Voting', component: Voting };
