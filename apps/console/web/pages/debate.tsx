/**
 * Crux debates (seed 004), live: the debates, and one debate with each thread's stage indicator,
 * the transcript with move badges, the steelman status table, commitments and falsifiers, the
 * lock attempts and the moderator's interventions, and the final crux card. The debate's own
 * event stream (GET /v1/debates/:id/events, the seed's event types) drives the refresh.
 */
import type { DebateSummary, DebateView, MessageView, SteelmanView, ThreadCrux, ThreadView } from '@agora/contracts';
import { useEffect, useState } from 'preact/hooks';
import { usePagedQuery, useQuery } from '../lib/api';
import { openEventStream, type StreamStatus } from '../lib/sse';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, Empty, ErrorNote, Facts, Loading, Meter, Section, ShowMore, Status, Time, type Tone } from '../ui';

const STAGES = ['DISCOVERY', 'CRUX_LOCK', 'EVIDENCE', 'CONVERGED'] as const;
const STAGE_LABEL: Record<string, string> = { DISCOVERY: 'Discovery', CRUX_LOCK: 'Crux lock', EVIDENCE: 'Evidence', CONVERGED: 'Converged', UNRESOLVED: 'Unresolved' };

const MOVE_TONE: Record<string, Tone> = {
  PROPOSE_QUESTION: 'info',
  ACCEPT_QUESTION: 'info',
  COMMIT: 'info',
  STEELMAN: 'warn',
  GRADE_STEELMAN: 'warn',
  DECLARE_FALSIFIER: 'good',
  ACCEPT_FALSIFIER: 'good',
  CHALLENGE: 'bad',
  PROVIDE_EVIDENCE: 'good',
  CONCEDE: 'warn',
  MODERATOR: 'bad',
};
const sideTone = (side: string): Tone => (side === 'YES' ? 'good' : side === 'NO' ? 'bad' : 'muted');
const gradeTone = (grade: string | null): Tone => (grade === 'ACCURATE' ? 'good' : grade === null ? 'muted' : grade === 'WRONG' ? 'bad' : 'warn');

function StageIndicator(props: { thread: ThreadView; budgets: DebateView['settings'] }) {
  const t = props.thread;
  const index = STAGES.indexOf(t.stage as (typeof STAGES)[number]);
  const budgetOf = (stage: string) => (stage === 'DISCOVERY' ? props.budgets.discovery : stage === 'CRUX_LOCK' ? props.budgets.cruxLock : stage === 'EVIDENCE' ? props.budgets.evidence : undefined);
  return (
    <ol class="ladder stages" aria-label={`Stages of thread ${t.threadId}`}>
      {STAGES.map((stage, i) => {
        const unresolved = t.stage === 'UNRESOLVED';
        const current = stage === t.stage;
        const state = current ? (stage === 'CONVERGED' ? 'step-done' : 'step-current') : index > i || (unresolved && i === 0) ? 'step-passed' : 'step-idle';
        const budget = budgetOf(stage);
        return (
          <li key={stage} class={`step ${state}`} data-stage={stage} data-testid={current ? 'stage-current' : undefined} aria-current={current ? 'step' : undefined}>
            <strong>{STAGE_LABEL[stage]}</strong>
            {budget ? (
              <span class="small muted">
                {current ? `${t.stageMessages} of ` : ''}
                {budget.min}-{budget.max} messages
              </span>
            ) : (
              <span class="small muted">final crux</span>
            )}
          </li>
        );
      })}
      {t.stage === 'UNRESOLVED' ? (
        <li class="step step-current" data-stage="UNRESOLVED" data-testid="stage-current" aria-current="step">
          <strong>Unresolved</strong>
          <span class="small">{t.unresolvedReason?.replace(/_/g, ' ')}</span>
        </li>
      ) : null}
    </ol>
  );
}

function Messages(props: { messages: MessageView[] }) {
  if (props.messages.length === 0) return <Empty>No message yet.</Empty>;
  return (
    <ol class="transcript" aria-label="Messages">
      {props.messages.map((m) => (
        <li key={m.seq} class={`message ${m.kind === 'MODERATOR' ? 'message-moderator' : 'message-debater'}`} data-kind={m.kind}>
          <div class="message-head">
            <span class="muted small">#{m.seq}</span>
            <Badge tone={MOVE_TONE[m.kind] ?? 'muted'}>{m.kind.replace(/_/g, ' ')}</Badge>
            {m.kind === 'MODERATOR' ? <strong>moderator</strong> : <AgentName id={m.agentId} />}
            {m.target ? (
              <span class="small">
                → <AgentName id={m.target} />
              </span>
            ) : null}
            <span class="muted small">{STAGE_LABEL[m.stage]}</span>
            <Time at={m.at} />
          </div>
          <p class="message-text">{m.text}</p>
        </li>
      ))}
    </ol>
  );
}

function SteelmanTable(props: { steelmans: SteelmanView[] }) {
  const pairs = new Map<string, { author: string; target: string; attempts: number; latest: SteelmanView; firstGrade: string | null }>();
  for (const s of props.steelmans) {
    const key = `${s.author}>${s.target}`;
    const pair = pairs.get(key);
    if (pair) Object.assign(pair, { attempts: pair.attempts + 1, latest: s });
    else pairs.set(key, { author: s.author, target: s.target, attempts: 1, latest: s, firstGrade: s.grade });
    if (s.firstAttempt) pairs.get(key)!.firstGrade = s.grade;
  }
  if (pairs.size === 0) return <Empty>No steelman yet: a challenge needs an ACCURATE steelman of its target first.</Empty>;
  return (
    <table class="responsive" data-testid="steelmans">
      <caption class="sr-only">Steelman status by pair</caption>
      <thead>
        <tr>
          <th scope="col">Steelman by</th>
          <th scope="col">Of</th>
          <th scope="col">Attempts</th>
          <th scope="col">First grade</th>
          <th scope="col">Latest grade</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {[...pairs.values()].map((p) => (
          <tr key={`${p.author}>${p.target}`}>
            <th scope="row" data-label="Steelman by">
              <AgentName id={p.author} />
            </th>
            <td data-label="Of">
              <AgentName id={p.target} />
            </td>
            <td data-label="Attempts">{p.attempts}</td>
            <td data-label="First grade">
              <Badge tone={gradeTone(p.firstGrade)}>{p.firstGrade ?? 'pending'}</Badge>
            </td>
            <td data-label="Latest grade">
              <Badge tone={gradeTone(p.latest.grade)}>{p.latest.grade ?? 'pending'}</Badge>
            </td>
            <td data-label="Reason" class="wide small">
              {p.latest.reason ?? ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Commitments(props: { thread: ThreadView }) {
  const t = props.thread;
  if (t.commitments.length === 0) return <Empty>No commitment yet.</Empty>;
  return (
    <table class="responsive" data-testid="commitments">
      <caption class="sr-only">Commitments and TopClaims</caption>
      <thead>
        <tr>
          <th scope="col">Debater</th>
          <th scope="col">Commits</th>
          <th scope="col">Confidence</th>
          <th scope="col">TopClaim</th>
          <th scope="col">Flips with the crux</th>
        </tr>
      </thead>
      <tbody>
        {t.commitments.map((c) => (
          <tr key={c.agentId}>
            <th scope="row" data-label="Debater">
              <AgentName id={c.agentId} />
            </th>
            <td data-label="Commits">
              <Badge tone={sideTone(c.side)}>{c.side}</Badge>
            </td>
            <td data-label="Confidence">
              <Meter value={c.confidence} label={`confidence of ${c.agentId}`} />
            </td>
            <td data-label="TopClaim" class="wide">
              {c.topClaim.statement} <Badge tone={sideTone(c.topClaim.side)}>{c.topClaim.side}</Badge>
            </td>
            <td data-label="Flips with the crux">{c.topClaim.flipsIfCruxFlips ? <Badge tone="good">yes</Badge> : <Badge tone="muted">no</Badge>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Falsifiers(props: { thread: ThreadView }) {
  const t = props.thread;
  const pending = t.proposedFalsifiers.filter((p) => p.status === 'pending');
  if (t.falsifiers.length === 0 && pending.length === 0) return <Empty>No falsifier yet.</Empty>;
  return (
    <ul class="falsifiers" data-testid="falsifiers">
      {t.falsifiers.map((f) => (
        <li key={f.falsifierId}>
          <AgentName id={f.agentId} />: <strong>{f.metric}</strong> <code>{f.threshold.text}</code> by <strong>{f.deadline}</strong>
          {f.source === 'moderator_proposal' ? <Badge tone="info">from the moderator</Badge> : null}
          <div class="small muted">{f.reasoning}</div>
        </li>
      ))}
      {pending.map((p) => (
        <li key={p.proposalId}>
          <Badge tone="warn">proposed for {p.forAgent}</Badge> {p.metric} <code>{p.threshold.text}</code> by {p.deadline}
        </li>
      ))}
    </ul>
  );
}

function Locks(props: { thread: ThreadView }) {
  const t = props.thread;
  if (t.lockAttempts.length === 0) return null;
  return (
    <ol class="locks" aria-label="Lock attempts">
      {t.lockAttempts.map((a) => (
        <li key={a.attempt}>
          Attempt {a.attempt}: {a.passed ? <Badge tone="good">locked</Badge> : <Badge tone="bad">failed</Badge>}
          {a.failed.map((c) => (
            <Badge key={c} tone="warn">
              {c.replace(/_/g, ' ')}
            </Badge>
          ))}
          {a.missing.length > 0 ? <div class="small muted">{a.missing.join('; ')}</div> : null}
        </li>
      ))}
    </ol>
  );
}

function CruxCard(props: { crux: ThreadCrux; primary?: boolean }) {
  const c = props.crux;
  return (
    <div class={`crux ${c.validated ? 'crux-valid' : 'crux-invalid'}`} data-testid={props.primary ? 'crux-card' : 'thread-crux'}>
      <div class="crux-head">
        <strong>{props.primary ? 'Primary crux' : 'Thread crux'}</strong> {c.validated ? <Badge tone="good">validated</Badge> : <Badge tone="bad">not validated</Badge>}
      </div>
      <p class="crux-question">{c.question}</p>
      <ul class="crux-positions">
        {Object.entries(c.positions).map(([agent, p]) => (
          <li key={agent}>
            <AgentName id={agent} /> <Badge tone={sideTone(p.side)}>{p.side}</Badge> <span class="small">({Math.round(p.confidence * 100)} %)</span> — {p.topClaim}
            {c.counterfactual[agent]?.flipsIfCruxFlips ? <span class="small muted"> · flips if the crux flips</span> : null}
          </li>
        ))}
      </ul>
      {c.resolutionCriteria.length > 0 ? (
        <>
          <strong class="small">Resolution criteria</strong>
          <ul class="small">
            {c.resolutionCriteria.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        </>
      ) : null}
      {c.validation.failures.length > 0 ? (
        <ul class="small error">
          {c.validation.failures.map((f, i) => (
            <li key={i}>{f}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Thread(props: { debate: DebateView; thread: ThreadView }) {
  const { debate, thread: t } = props;
  const messages = debate.messages.filter((m) => m.threadId === t.threadId);
  return (
    <Section title={debate.threads.length > 1 ? `Thread ${t.threadId}: ${t.topic}` : 'Thread'} id={`thread-${t.threadId}`}>
      <StageIndicator thread={t} budgets={debate.settings} />
      <Facts
        items={[
          ['Question', t.question ?? <span class="muted">none accepted yet</span>],
          t.parentThreadId !== null && ['Spawned from', <a href={`#thread-${t.parentThreadId}`}>thread {t.parentThreadId}</a>],
          t.mergedInto !== null && ['Merged', <span data-testid="thread-merged"><Badge tone="muted">a duplicate</Badge> ended in <a href={`#thread-${t.mergedInto}`}>thread {t.mergedInto}</a></span>],
          t.spawnProposals.length > 0 && [
            'Threads proposed here',
            <ul class="plain" data-testid="spawn-proposals">
              {t.spawnProposals.map((p) => (
                <li key={p.seq}>
                  “{p.topic}” by <AgentName id={p.proposedBy} />
                  {p.secondedBy === null ? <span class="muted"> · not seconded yet</span> : <> · seconded by <AgentName id={p.secondedBy} /></>}
                  {p.spawnedThreadId === null ? null : <> · spawned as <a href={`#thread-${p.spawnedThreadId}`}>thread {p.spawnedThreadId}</a></>}
                </li>
              ))}
            </ul>,
          ],
          t.forcedBinary && ['Framing', <Badge tone="warn">forced binary</Badge>],
          ['Lock attempts', `${t.lockAttempts.length} of ${debate.settings.maxLockAttempts}`],
        ]}
      />
      <Locks thread={t} />
      <h3>Steelmans</h3>
      <SteelmanTable steelmans={t.steelmans} />
      <h3>Commitments</h3>
      <Commitments thread={t} />
      <h3>Falsifiers</h3>
      <Falsifiers thread={t} />
      {t.crux && debate.threads.length > 1 ? <CruxCard crux={t.crux} /> : null}
      <h3>Messages</h3>
      <Messages messages={messages} />
    </Section>
  );
}

/** The debate's own stream: every seed event refreshes the view; the last one is shown. */
function useDebateStream(debateId: string, refresh: () => void): { status: StreamStatus; last: string | undefined } {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [last, setLast] = useState<string | undefined>();
  useEffect(() => {
    let soon: ReturnType<typeof setTimeout> | undefined;
    const close = openEventStream({
      path: `/v1/debates/${encodeURIComponent(debateId)}/events`,
      onEvent: (event) => {
        setLast(event.type);
        clearTimeout(soon);
        soon = setTimeout(refresh, 50);
      },
      onStatus: setStatus,
    });
    return () => {
      clearTimeout(soon);
      close();
    };
  }, [debateId]);
  return { status, last };
}

function DebateDetail(props: { debateId: string }) {
  const debate = useQuery<DebateView>(`/v1/debate/debates/${encodeURIComponent(props.debateId)}`);
  const stream = useDebateStream(props.debateId, debate.refresh);
  const d = debate.data;
  if (!d) return debate.error ? <ErrorNote error={debate.error} what={`debate ${props.debateId}`} /> : <Loading what={`debate ${props.debateId}`} />;
  const primary = d.threads.find((t) => t.threadId === d.primaryThreadId)?.crux ?? (d.status === 'complete' ? d.threads[0]?.crux : undefined);
  return (
    <>
      <Section title={d.topic} id="debate-head" actions={<span class="small muted" data-testid="stream-status">{stream.status === 'live' ? `live${stream.last ? ` · ${stream.last}` : ''}` : stream.status}</span>}>
        <ul class="plain debaters" aria-label="Debaters">
          {d.participants.map((p) => (
            <li key={p.agentId}>
              <AgentName id={p.agentId} /> <span class="small muted">{p.persona}</span>
            </li>
          ))}
        </ul>
        <Facts
          items={[
            ['Status', d.outcome ? <Status value={d.outcome} /> : <Badge tone="info">in progress</Badge>],
            ['Opened', <Time at={d.openedAt} />],
            d.completedAt && ['Completed', <Time at={d.completedAt} />],
            d.usage.calls > 0 && ['Model cost', `$${d.usage.costUsd.toFixed(4)} over ${d.usage.calls} calls`],
            d.dcg.length > 1 && ['DCG', d.dcg.map((x) => `${x.threadId} ${x.score.toFixed(2)}`).join(' · ')],
          ]}
        />
        {primary ? <CruxCard crux={primary} primary /> : null}
      </Section>
      {d.threads.map((t) => (
        <Thread key={t.threadId} debate={d} thread={t} />
      ))}
    </>
  );
}

function DebateList() {
  const list = usePagedQuery<DebateSummary>('/v1/debate/debates', 'debates', {}, ['debate']);
  return (
    <Section title="Debates">
      <ErrorNote error={list.error} what="the debates" />
      {!list.data ? (
        <Loading what="the debates" />
      ) : list.data.items.length === 0 ? (
        <Empty>No debate yet. Debaters open one with OpenDebate (npm run demo:debate plays the seed's).</Empty>
      ) : (
        <ul class="plain debate-list">
          {list.data.items.map((d) => (
            <li key={d.debateId}>
              <a href={`/debate/${encodeURIComponent(d.debateId)}`}>{d.topic}</a>{' '}
              {d.stages.map((s) => (
                <Badge key={s.threadId} tone={s.stage === 'CONVERGED' ? 'good' : s.stage === 'UNRESOLVED' ? 'bad' : 'info'}>
                  {STAGE_LABEL[s.stage]}
                </Badge>
              ))}{' '}
              {d.outcome ? <Status value={d.outcome} /> : null} <span class="small muted">{d.participants.join(' vs ')}</span> <Time at={d.openedAt} />
            </li>
          ))}
        </ul>
      )}
      <ShowMore list={list.data} loading={list.loading} onMore={list.showMore} what="debates" />
    </Section>
  );
}

function Debates(props: PageProps) {
  const id = props.rest[0];
  return id ? <DebateDetail debateId={id} /> : <DebateList />;
}

export const debatePage: ConsolePage = { path: 'debate', label: 'Debate', title: 'Crux debates', component: Debates };
