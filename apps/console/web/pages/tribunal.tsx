/**
 * Tribunal (seed 000): the challenge rate and its band, then every proposal with its status,
 * rounds, the constitutions that covered it, and each objection (constraint, scenario, suggested
 * revision) with how it was resolved.
 */
import type { ObjectionView, ProposalEscalationView, ProposalSummary, ProposalView, ReviewRoundView, TribunalStats } from '@agora/contracts';
import { healthBand, OVERHEAD_ABOVE, RUBBER_STAMPING_BELOW } from '@agora/domain-tribunal/browser';
import { usePagedQuery, useQuery } from '../lib/api';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, plural, Empty, ErrorNote, Facts, Loading, percent, Section, ShowMore, Status, Tile, Time, useScrollIntoViewOnChange, type Tone } from '../ui';

/** The seed's bands, as the projections compute them (healthBand): rubber-stamping, healthy (the target is 20 to 40 %; to 60 % is tolerated), overhead. */
export function challengeBand(rate: number | null): { label: string; tone: Tone } {
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  switch (healthBand(rate)) {
    case 'unknown':
      return { label: 'nothing reviewed yet', tone: 'muted' };
    case 'rubber_stamping':
      return { label: `rubber-stamping (under ${pct(RUBBER_STAMPING_BELOW)})`, tone: 'bad' };
    case 'overhead':
      return { label: `overhead too high (over ${pct(OVERHEAD_ABOVE)})`, tone: 'bad' };
    case 'healthy':
      // Amber says "look": it never sits beside the word healthy.
      return (rate ?? 0) <= 0.4 ? { label: 'healthy (target 20–40 %)', tone: 'good' } : { label: `above the 20–40 % target (tolerated to ${pct(OVERHEAD_ABOVE)})`, tone: 'warn' };
  }
}

/** Fewer proposals reviewed in the window than this, and a challenge rate says little (a demo's four): the band says so rather than raise an alarm. */
export const TOO_FEW_TO_JUDGE = 20;

function StatsTiles(props: { stats: TribunalStats; underCovered: string | undefined }) {
  const { stats } = props;
  const reviewed = stats.proposals.reviewed;
  const band =
    reviewed > 0 && reviewed < TOO_FEW_TO_JUDGE
      ? { label: `${reviewed} reviewed: too few to judge (healthy is 20–40 % over ${TOO_FEW_TO_JUDGE} or more)`, tone: 'muted' as Tone }
      : challengeBand(stats.challengeRate);
  return (
    <div class="tiles" aria-label="Tribunal figures">
      <Tile wide label={`challenge rate over ${stats.window.days} days`} value={percent(stats.challengeRate)}>
        <Badge tone={band.tone}>{band.label}</Badge>
      </Tile>
      <Tile label="reviewed / challenged" value={`${stats.proposals.reviewed} / ${stats.proposals.challenged}`} />
      <Tile label="under 3 constitutions" value={props.underCovered ?? '–'} />
      <Tile label="mean rounds to approval" value={stats.meanRoundsToApproval === null ? '–' : stats.meanRoundsToApproval.toFixed(1)} />
      <Tile label="deemed approvals" value={stats.deemedApprovals} />
      <Tile label="deadlocks escalated" value={stats.deadlocksEscalated} />
      <Tile label="proceeded despite objections" value={stats.proceededDespiteObjections} />
    </div>
  );
}

function ProposalList(props: { proposals: ProposalSummary[]; selected: string | undefined }) {
  return (
    <ul class="pick-list" aria-label="Proposals">
      {props.proposals.map((p) => (
        <li key={p.proposalId}>
          <a href={`/tribunal/${encodeURIComponent(p.proposalId)}`} aria-current={p.proposalId === props.selected ? 'true' : undefined}>
            <span class="pick-title">{p.title}</span>
            <span class="pick-meta">
              <Status value={p.status} /> <span class="muted small">{p.proposalId}</span>
              {p.round ? <span class="muted small"> · round {p.round}</span> : null}
              {p.openObjections > 0 ? <Badge tone={p.status === 'review' || p.status === 'escalated' ? 'bad' : 'muted'}>{plural(p.openObjections, 'open objection')}</Badge> : null}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

/** Distinct constitutions that reviewed explicitly (deemed approvals do not count, as in the seed's coverage measurement). */
function covered(p: ProposalView): string[] {
  const seen = new Set<string>();
  for (const r of p.rounds) for (const review of r.reviews) if (!review.deemed) seen.add(review.constitution);
  return [...seen];
}

function Round(props: { round: ReviewRoundView }) {
  const { round } = props;
  const reviewOf = (constitution: string) => round.reviews.find((r) => r.constitution === constitution);
  return (
    <li class="round">
      <div class="round-head">
        <strong>Round {round.round}</strong> <span class="muted small">revision {round.revision}</span>{' '}
        {round.status === 'open' ? <Badge tone="warn">open · deadline <Time at={round.deadlineAt} /></Badge> : <Status value={round.outcome ?? 'closed'} />}
        {round.closeReason ? <span class="muted small"> closed: {round.closeReason.replace(/_/g, ' ')}</span> : null}
        {round.uncovered.length > 0 ? <Badge tone="bad">uncovered: {round.uncovered.join(', ')}</Badge> : null}
      </div>
      <ul class="reviews">
        {round.assignments.map((a) => {
          const review = reviewOf(a.constitution);
          return (
            <li key={a.constitution}>
              <Badge tone="info">{a.constitution}</Badge> <AgentName id={a.reviewer} />{' '}
              {review ? (
                <>
                  <Status value={review.verdict} label={review.deemed ? 'approve (deemed: silent at the deadline)' : review.verdict} />
                  {review.reasoning ? <span class="small"> {review.reasoning}</span> : null}
                </>
              ) : (
                <span class="muted small">no answer yet</span>
              )}
            </li>
          );
        })}
      </ul>
    </li>
  );
}

function resolution(o: ObjectionView, escalations: ProposalEscalationView[]): string {
  switch (o.status) {
    case 'open':
      return 'open: blocks until a revision answers it or its author withdraws it';
    case 'answered':
      return `answered by revision ${o.answeredByRevision ?? '?'}`;
    case 'withdrawn':
      return `withdrawn by ${o.reviewer}${o.withdrawalReason ? `: ${o.withdrawalReason}` : ''}`;
    case 'overridden': {
      const by = escalations.find((e) => e.decision === 'approve');
      return `overridden: operator ${by?.operator ?? ''} approved over it${by?.decisionReason ? ` (${by.decisionReason})` : ''}`;
    }
  }
}

function Objection(props: { objection: ObjectionView; escalations: ProposalEscalationView[] }) {
  const o = props.objection;
  return (
    <article class={`objection objection-${o.status}`} aria-label={`Objection ${o.objectionId}`}>
      <header>
        <Badge tone="info">{o.constitution}</Badge> <AgentName id={o.reviewer} /> <span class="muted small">round {o.round} · revision {o.revision} · <Time at={o.raisedAt} /></span>{' '}
        <Badge tone={o.status === 'open' ? 'bad' : o.status === 'overridden' ? 'warn' : 'good'}>{o.status}</Badge>
      </header>
      <dl class="objection-body">
        <dt>Constraint</dt>
        <dd>{o.constraint}</dd>
        <dt>Failure scenario</dt>
        <dd>{o.scenario}</dd>
        {o.suggestedRevision ? (
          <>
            <dt>Suggested revision</dt>
            <dd>{o.suggestedRevision}</dd>
          </>
        ) : null}
        {o.rejectReason ? (
          <>
            <dt>Reason to reject</dt>
            <dd>{o.rejectReason}</dd>
          </>
        ) : null}
        <dt>Resolution</dt>
        <dd>{resolution(o, props.escalations)}</dd>
      </dl>
    </article>
  );
}

function ProposalDetail(props: { proposalId: string }) {
  const proposal = useQuery<ProposalView>(`/v1/proposal/proposals/${encodeURIComponent(props.proposalId)}`, {}, ['proposal']);
  const p = proposal.data;
  if (!p) return proposal.error ? <ErrorNote error={proposal.error} what={`proposal ${props.proposalId}`} /> : <Loading what="the proposal" />;
  const cover = covered(p);
  return (
    <div class="detail">
      <div class="card-head">
        <h2 id="proposal-title">{p.title}</h2>
        <Status value={p.status} />
      </div>
      <Facts
        items={[
          ['Proposal', <code>{p.proposalId}</code>],
          ['Proposer', <AgentName id={p.proposer} />],
          ['Class', p.proposalClass],
          ['Revision', p.revision],
          ['Rounds', `${p.rounds.length} (${p.contestedRounds} contested of ${p.rules.maxRoundsBeforeEscalation} before escalation)`],
          ['Submitted', <Time at={p.submittedAt} />],
        ]}
      />
      <p>
        <span class="muted small">Problem: </span>
        {p.problem}
      </p>
      <p class="small">{p.body}</p>
      <h3>Constitutions covered</h3>
      <p class="chips" aria-label="Constitutions covered">
        {p.rules.requiredConstitutions.map((c) => (
          <Badge key={c} tone={cover.includes(c) ? 'good' : 'muted'} title={cover.includes(c) ? 'reviewed explicitly' : 'not reviewed explicitly'}>
            {cover.includes(c) ? '✓ ' : ''}
            {c}
          </Badge>
        ))}
        <span class={cover.length < p.rules.minConstitutions ? 'error small' : 'muted small'}>
          {cover.length} of at least {p.rules.minConstitutions}
        </span>
      </p>
      {p.escalations.length > 0 ? (
        <>
          <h3>Escalations</h3>
          <ul class="plain">
            {p.escalations.map((e) => (
              <li key={e.escalation}>
                <Badge tone="bad">{e.reason.replace(/_/g, ' ')}</Badge> after round {e.round} <Time at={e.escalatedAt} />:{' '}
                {e.decision ? (
                  <>
                    <Status value={e.decision} /> by <AgentName id={e.operator} /> <Time at={e.decidedAt} />
                    {e.decisionReason ? <q class="small"> {e.decisionReason}</q> : null}
                  </>
                ) : (
                  <>
                    <Badge tone="warn">waiting for an operator</Badge> <a href="/inbox">decide in the inbox</a>
                  </>
                )}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h3>Objections ({p.objections.length})</h3>
      {p.objections.length === 0 ? <Empty>No objections.</Empty> : p.objections.map((o) => <Objection key={o.objectionId} objection={o} escalations={p.escalations} />)}
      <h3>Rounds</h3>
      {p.rounds.length === 0 ? <Empty>No review round yet.</Empty> : <ol class="rounds">{[...p.rounds].reverse().map((r) => <Round key={r.round} round={r} />)}</ol>}
      {p.execution ? (
        <>
          <h3>Execution</h3>
          <p>
            {p.execution.despiteObjections ? <Badge tone="bad">proceeded despite objections</Badge> : <Badge tone="good">executed</Badge>} by <AgentName id={p.execution.executive} />{' '}
            <Time at={p.execution.recordedAt} />: {p.execution.summary}
          </p>
          <h3>Outcome</h3>
          {p.outcome ? (
            <p id="proposal-outcome">
              {p.outcome.outcome === 'worked' ? <Badge tone="good">worked</Badge> : <Badge tone="bad">failed</Badge>} reported by <AgentName id={p.outcome.reporter} /> ({p.outcome.reportedAs}) <Time at={p.outcome.reportedAt} />: {p.outcome.note}
            </p>
          ) : (
            <Empty>No outcome reported yet: its proposer or an operator reports it (agora outcome report).</Empty>
          )}
        </>
      ) : null}
    </div>
  );
}

function Tribunal(props: PageProps) {
  const stats = useQuery<TribunalStats>('/v1/tribunal/stats', {}, ['proposal']);
  // A count (1,000 at most: a page; more shows as "1000+").
  const coverage = useQuery<{ proposals: unknown[]; nextCursor?: string }>('/v1/tribunal/coverage', { limit: 1000 }, ['proposal']);
  const list = usePagedQuery<ProposalSummary>('/v1/proposal/proposals', 'proposals', {}, ['proposal']);
  const proposals = list.data?.items ?? [];
  const detailRef = useScrollIntoViewOnChange(props.rest[0]);
  const selected = props.rest[0] ?? proposals[0]?.proposalId;
  return (
    <>
      <ErrorNote error={stats.error} what="the tribunal figures" />
      {stats.data ? <StatsTiles stats={stats.data} underCovered={coverage.data && `${coverage.data.proposals.length}${coverage.data.nextCursor ? '+' : ''}`} /> : null}
      <div class="split">
        <Section title="Proposals">
          <ErrorNote error={list.error} what="the proposals" />
          {list.loading && !list.data ? <Loading what="proposals" /> : null}
          {list.data && proposals.length === 0 ? <Empty>No proposals yet.</Empty> : <ProposalList proposals={proposals} selected={selected} />}
          <ShowMore list={list.data} loading={list.loading} onMore={list.showMore} what="proposals" />
        </Section>
        <section class="card" ref={detailRef} aria-labelledby="proposal-title">
          {selected ? <ProposalDetail key={selected} proposalId={selected} /> : <Empty>Select a proposal.</Empty>}
        </section>
      </div>
    </>
  );
}

export const tribunalPage: ConsolePage = { path: 'tribunal', label: 'Tribunal', title: 'Tribunal', component: Tribunal };
