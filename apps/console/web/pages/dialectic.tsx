/**
 * Dialectic recovery (seed 001): each paused agent's recovery with its transcript (thesis,
 * antithesis, synthesis rounds), the hard-limit results, the resolution's signatures and the
 * escalation ladder (tie-breaker, validator quorum, operator).
 */
import type { Condition, DialecticMessageView, DialecticSessionSummary, DialecticSessionView, DialecticStats, EscalationView, HardLimitViolation, ResolutionPayload, ResolutionSignatureView } from '@agora/contracts';
import { useEffect, useState } from 'preact/hooks';
import { usePagedQuery, useQuery } from '../lib/api';
import { verifyResolutionSignature } from '../lib/signing';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, Empty, ErrorNote, Facts, Loading, percent, Section, ShowMore, Status, Tile, Time, useScrollIntoViewOnChange } from '../ui';

const LIVE = ['dialectic_session', 'agent'];

function Conditions(props: { conditions: Condition[] | null }) {
  if (!props.conditions) return <span class="muted">none proposed</span>;
  if (props.conditions.length === 0) return <span class="muted">no conditions</span>;
  return (
    <ul class="conditions">
      {props.conditions.map((c, i) => (
        <li key={i}>
          <code>{c.operation}</code>
          {Object.keys(c.parameters).length > 0 ? (
            <span class="small">
              {' '}
              {Object.entries(c.parameters)
                .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
                .join(', ')}
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Violations(props: { violations: HardLimitViolation[] }) {
  if (props.violations.length === 0) return null;
  return (
    <ul class="violations" aria-label="Hard-limit violations">
      {props.violations.map((v, i) => (
        <li key={i}>
          <Badge tone="bad">hard limit: {v.rule.replace(/_/g, ' ')}</Badge> <code>{v.operation}</code>
          {v.parameter ? <code>.{v.parameter}</code> : null} <span class="small">{v.message}</span>
        </li>
      ))}
    </ul>
  );
}

function Message(props: { message: DialecticMessageView }) {
  const m = props.message;
  const title = m.kind === 'synthesis' ? `Synthesis, round ${m.round ?? '?'}` : m.kind === 'thesis' ? 'Thesis' : 'Antithesis';
  return (
    <li class={`message message-${m.party}`}>
      <div class="message-head">
        <strong>{title}</strong> <AgentName id={m.author} /> <span class="muted small">({m.party === 'agent' ? 'the paused agent' : 'the reviewer'})</span> <Time at={m.at} />
        {m.agrees === true ? <Badge tone="good">agrees</Badge> : m.agrees === false ? <Badge tone="warn">does not agree</Badge> : null}
      </div>
      <dl class="objection-body">
        {m.rootCause !== null ? (
          <>
            <dt>Root cause</dt>
            <dd>{m.rootCause}</dd>
          </>
        ) : null}
        <dt>Conditions</dt>
        <dd>
          <Conditions conditions={m.conditions} />
        </dd>
        <dt>Reasoning</dt>
        <dd>{m.reasoning}</dd>
        {m.observedMetrics ? (
          <>
            <dt>Observed</dt>
            <dd class="small">
              {Object.entries(m.observedMetrics)
                .map(([k, v]) => `${k} ${v}`)
                .join(' · ')}
            </dd>
          </>
        ) : null}
        {m.concerns && m.concerns.length > 0 ? (
          <>
            <dt>Concerns</dt>
            <dd>
              <ul class="small">
                {m.concerns.map((c, i) => (
                  <li key={i}>{c}</li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
        <dt>Hard limits</dt>
        <dd>{m.violations.length === 0 ? <Badge tone="good">within the hard limits</Badge> : <Violations violations={m.violations} />}</dd>
      </dl>
    </li>
  );
}

const TIERS: Array<{ tier: EscalationView['tier']; label: string; what: string }> = [
  { tier: 'tie_break', label: 'Tier 1 · tie-breaker', what: 'a third agent picks a side' },
  { tier: 'quorum', label: 'Tier 2 · quorum', what: 'a five-validator vote' },
  { tier: 'operator', label: 'Tier 3 · operator', what: 'a human decides; the agent stays paused until then' },
];

function Ladder(props: { session: DialecticSessionView }) {
  const s = props.session;
  return (
    <ol class="ladder" aria-label="Escalation ladder">
      <li class={`step ${s.escalations.length === 0 ? (s.resolved ? 'step-done' : 'step-current') : 'step-passed'}`}>
        <strong>Dialectic</strong>
        <span class="small muted">the agent and its reviewer</span>
        {s.escalations.length === 0 && s.resolved ? <Badge tone="good">resolved</Badge> : null}
      </li>
      {TIERS.map(({ tier, label, what }) => {
        const reached = s.escalations.filter((e) => e.tier === tier);
        const last = reached.at(-1);
        const state = !last ? 'step-idle' : last.outcome === null ? 'step-current' : last.outcome === 'resolved' ? 'step-done' : 'step-passed';
        return (
          <li key={tier} class={`step ${state}`}>
            <strong>{label}</strong>
            <span class="small muted">{what}</span>
            {last ? (
              <span class="small">
                {last.reason.replace(/_/g, ' ')} <Time at={last.escalatedAt} />
                {last.tieBreaker ? (
                  <>
                    {' '}
                    · <AgentName id={last.tieBreaker} />
                  </>
                ) : null}
                {last.votingSessionId ? (
                  <>
                    {' '}
                    · <a href={`/voting/${encodeURIComponent(last.votingSessionId)}`}>voting session</a>
                  </>
                ) : null}{' '}
                {last.outcome ? <Status value={last.outcome} /> : <Badge tone="warn">waiting</Badge>}
                {last.tieBreak ? <div class="small">sided with {last.tieBreak.side}: {last.tieBreak.reasoning}</div> : null}
                {last.quorumResult ? (
                  <div class="small">
                    quorum: {last.quorumResult.approve} approve, {last.quorumResult.deny} deny of {last.quorumResult.votes}: {last.quorumResult.reason}
                  </div>
                ) : null}
              </span>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

/** Each signature of the resolution, checked here in the browser (WebCrypto Ed25519) under the key it names. */
function Signatures(props: { payload: ResolutionPayload; signatures: ResolutionSignatureView[] }) {
  const [checked, setChecked] = useState<Record<string, boolean>>({});
  useEffect(() => {
    let live = true;
    void Promise.all(props.signatures.map(async (sig) => [sig.signer + sig.role, await verifyResolutionSignature(props.payload, sig)] as const)).then((results) => live && setChecked(Object.fromEntries(results)));
    return () => {
      live = false;
    };
  }, [props.payload, props.signatures]);
  if (props.signatures.length === 0) return <Empty>No signatures yet.</Empty>;
  return (
    <ul class="plain">
      {props.signatures.map((sig) => (
        <li key={sig.signer + sig.role}>
          {checked[sig.signer + sig.role] === undefined ? (
            <Badge tone="muted">checking</Badge>
          ) : checked[sig.signer + sig.role] ? (
            <Badge tone="good" title="Checked in this browser: Ed25519 over the canonical resolution">
              ✓ signature verified
            </Badge>
          ) : (
            <Badge tone="bad">✗ signature does not verify</Badge>
          )}{' '}
          <AgentName id={sig.signer} /> <span class="muted small">as {sig.role.replace(/_/g, ' ')}</span> <Time at={sig.signedAt} />
          <div class="small muted mono" title={sig.signature}>
            key {sig.publicKey.slice(0, 20)}… · signature {sig.signature.slice(0, 16)}…
          </div>
        </li>
      ))}
    </ul>
  );
}

function SessionDetail(props: { sessionId: string }) {
  const session = useQuery<DialecticSessionView>(`/v1/dialectic/sessions/${encodeURIComponent(props.sessionId)}`, {}, LIVE);
  const s = session.data;
  if (!s) return session.error ? <ErrorNote error={session.error} what={`recovery ${props.sessionId}`} /> : <Loading what="the recovery" />;
  const resolution = s.resolved?.resolution ?? s.proposed?.payload;
  return (
    <div class="detail">
      <div class="card-head">
        <h2 id="recovery-title">
          Recovery of {s.agentId} <span class="muted small">pause {s.pause}</span>
        </h2>
        <Status value={s.status} />
      </div>
      <Facts
        items={[
          ['Session', <code>{s.sessionId}</code>],
          ['Paused agent', <AgentName id={s.agentId} />],
          ['Reviewer', <AgentName id={s.reviewer} />],
          ['Trigger', `risk ${s.trigger.risk.toFixed(2)} ≥ ${s.trigger.threshold.toFixed(2)}, health ${s.trigger.health.toFixed(2)}`],
          ['Paused', <Time at={s.pausedAt} />],
          s.awaiting.length > 0 && ['Waiting for', s.awaiting.join(', ')],
          s.deadlineAt && ['Deadline', <Time at={s.deadlineAt} />],
          s.closedAt && ['Closed', <Time at={s.closedAt} />],
        ]}
      />
      <p>
        <span class="muted small">Reason: </span>
        {s.reason}
        {s.tags.length > 0 ? (
          <span class="chips">
            {' '}
            {s.tags.map((t) => (
              <Badge key={t}>{t}</Badge>
            ))}
          </span>
        ) : null}
      </p>
      <h3>Escalation ladder</h3>
      <Ladder session={s} />
      {s.operatorDecision ? (
        <p>
          Operator decision: <Status value={s.operatorDecision.decision} label={s.operatorDecision.decision.replace(/_/g, ' ')} /> by <AgentName id={s.operatorDecision.operator} />{' '}
          <Time at={s.operatorDecision.decidedAt} />: <q>{s.operatorDecision.reasoning}</q>
        </p>
      ) : s.status === 'awaiting_operator' ? (
        <p class="notice">
          Waiting for an operator: <a href="/inbox">decide in the inbox</a>.
        </p>
      ) : null}
      <h3>Transcript</h3>
      {s.messages.length === 0 ? <Empty>Nothing said yet.</Empty> : <ol class="transcript">{s.messages.map((m, i) => <Message key={i} message={m} />)}</ol>}
      {s.blocked.length > 0 ? (
        <>
          <h3>Blocked by the hard limits</h3>
          {s.blocked.map((b, i) => (
            <div key={i} class="objection objection-open">
              <p class="small">
                Resolution blocked <Time at={b.blockedAt} />: {b.resolution.rootCause}
              </p>
              <Violations violations={b.violations} />
            </div>
          ))}
        </>
      ) : null}
      {resolution ? (
        <>
          <h3>{s.resolved ? 'Resolution' : 'Proposed resolution'}</h3>
          <dl class="objection-body">
            <dt>Root cause</dt>
            <dd>{resolution.rootCause}</dd>
            <dt>Conditions</dt>
            <dd>
              <Conditions conditions={resolution.conditions} />
            </dd>
            <dt>Decided by</dt>
            <dd>
              {resolution.decidedBy.replace(/_/g, ' ')}
              {resolution.decider ? ` (${resolution.decider})` : ''}
            </dd>
            {s.resolved?.riskThreshold != null ? (
              <>
                <dt>New risk threshold</dt>
                <dd>{s.resolved.riskThreshold}</dd>
              </>
            ) : null}
          </dl>
          <h3>Signatures</h3>
          <Signatures payload={resolution} signatures={s.resolved?.signatures ?? s.proposed?.signatures ?? []} />
        </>
      ) : null}
      {s.relapse ? (
        <p class="error">
          Relapsed: paused again {Math.round(s.relapse.afterMs / 1000)} s after resuming (risk {s.relapse.risk}).
        </p>
      ) : null}
      {s.audit ? (
        <p>
          Audit: <AgentName id={s.audit.auditor} /> {s.audit.verdict ? <Status value={s.audit.verdict} /> : <Badge tone="warn">pending</Badge>}
          {s.audit.reasoning ? <span class="small"> {s.audit.reasoning}</span> : null}
        </p>
      ) : null}
    </div>
  );
}

function SessionList(props: { sessions: DialecticSessionSummary[]; selected: string | undefined }) {
  return (
    <ul class="pick-list" aria-label="Recoveries">
      {props.sessions.map((s) => (
        <li key={s.sessionId}>
          <a href={`/dialectic/${encodeURIComponent(s.sessionId)}`} aria-current={s.sessionId === props.selected ? 'true' : undefined}>
            <span class="pick-title">
              {s.agentId} <span class="muted small">pause {s.pause}</span>
            </span>
            <span class="pick-meta">
              <Status value={s.status} />
              {s.reviewer ? <span class="muted small">reviewer {s.reviewer}</span> : null}
              {s.round > 0 ? <span class="muted small">· round {s.round}</span> : null}
              {s.tier ? <Badge tone="warn">tier {s.tier.replace(/_/g, ' ')}</Badge> : null}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

function Dialectic(props: PageProps) {
  const stats = useQuery<DialecticStats>('/v1/dialectic/stats', {}, LIVE);
  const list = usePagedQuery<DialecticSessionSummary>('/v1/dialectic/sessions', 'sessions', {}, LIVE);
  const sessions = list.data?.items ?? [];
  const detailRef = useScrollIntoViewOnChange(props.rest[0]);
  const selected = props.rest[0] ?? sessions[0]?.sessionId;
  const st = stats.data;
  return (
    <>
      <ErrorNote error={stats.error} what="the dialectic figures" />
      {st ? (
        <div class="tiles" aria-label="Dialectic figures">
          <Tile label="recoveries" value={st.sessions} />
          <Tile label={`resolved within ${Math.round(st.targetMs / 60000)} min (target 90 %)`} value={percent(st.resolvedWithinTargetRate)} />
          <Tile label="escalated to quorum (target under 5 %)" value={percent(st.quorumEscalationRate)} />
          <Tile label="repeat failures (target under 10 %)" value={percent(st.repeatFailureRate)} />
          <Tile label="hard-limit blocks" value={st.hardLimitBlocks} />
          <Tile label="collusion flags (target 0)" value={st.collusionFlags} />
        </div>
      ) : null}
      <div class="split">
        <Section title="Recoveries">
          <ErrorNote error={list.error} what="the recoveries" />
          {list.loading && !list.data ? <Loading what="recoveries" /> : null}
          {list.data && sessions.length === 0 ? <Empty>No agent has been paused yet.</Empty> : <SessionList sessions={sessions} selected={selected} />}
          <ShowMore list={list.data} loading={list.loading} onMore={list.showMore} what="recoveries" />
        </Section>
        <section class="card" ref={detailRef} aria-labelledby="recovery-title">
          {selected ? <SessionDetail key={selected} sessionId={selected} /> : <Empty>Select a recovery.</Empty>}
        </section>
      </div>
    </>
  );
}

export const dialecticPage: ConsolePage = { path: 'dialectic', label: 'Dialectic', title: 'Dialectic recovery', component: Dialectic };
