/**
 * The Deliberation Chamber (seed 003), live: the month's budget and the chamber's figures, the
 * sessions (status, question, cost against the ceiling, outcome), and one session read off its
 * transcript: the question and context, the panel (labels as the arbiter saw them, and the real
 * model and provider), the phases (blind answers, divergence against the threshold, the
 * cross-examination with its position changes), the arbiter's verdict beside the blind majority,
 * provider errors verbatim, cost and wall time, the human follow-up, and every event verbatim.
 */
import type { ArbiterVerdict, ChamberBudgetView as BudgetSchema, ChamberSessionSummary, ChamberSessionView, ChamberStats as StatsSchema, CrossExamAnswer, Divergence, PanelAnswer, ProviderErrorRecord } from '@agora/contracts';
import type { z } from 'zod';
import { usePagedQuery, useQuery } from '../lib/api';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, Empty, ErrorNote, Facts, Loading, Meter, percent, Section, ShowMore, Status, Tile, Time, useScrollIntoViewOnChange, type Tone } from '../ui';

const LIVE = ['chamber_session', 'chamber_budget'];
type ChamberBudgetView = z.infer<typeof BudgetSchema>;
type ChamberStats = z.infer<typeof StatsSchema>;
type Entry = ChamberSessionView['transcript'][number];
interface Panelist {
  index: number;
  model: string;
  provider: string;
}
interface Proposed {
  question: string;
  context: string;
  rationale: string;
  panel: Panelist[];
  arbiter: { model: string; provider: string };
  fallbackArbiter: { model: string; provider: string } | null;
  excluded: { model: string; reason: string }[];
  rules: { divergenceThreshold: number; crossExamination: boolean; minPanelists: number; recusal: string };
  maxCost: number;
  costCeiling: number;
  currency: string;
  approvalExpiresAt: string;
}
interface CallRequested {
  callId: string;
  step: 'blind' | 'cross_exam' | 'arbiter';
  attempt: number;
  panelist: number | null;
  role: string;
  model: string;
  provider: string;
  labels: Record<string, number>;
}
interface CallSettled {
  callId: string;
  step: string;
  model: string;
  provider: string;
  ok: boolean;
  output?: unknown;
  error?: ProviderErrorRecord;
  cost: number;
  latencyMs: number;
  retried: ProviderErrorRecord[];
}
interface PositionChange {
  panelist: number;
  label: string;
  from: string;
  to: string;
  towardLabel: string | null;
  towardBlindMajority: boolean;
}
interface AnswerRef {
  label: string;
  panelist: number;
  model: string;
  provider: string;
}
interface Concluded {
  outcome: 'consensus' | 'no_consensus' | 'failed';
  reason: string;
  position: string | null;
  synthesis: string | null;
  restsOn: AnswerRef[];
  arbiter: { model: string; provider: string; fallback: boolean } | null;
  arbiterText: string | null;
  forcedSynthesisRefused: boolean;
  selfCheck: { leanedOn: AnswerRef | null; why: string } | null;
  ownProviderWin: boolean | null;
  blindMajority: { position: string; count: number; of: number } | null;
  changedFromBlindMajority: boolean | null;
  errors: { callId: string; model: string; provider: string; error: ProviderErrorRecord }[];
  cost: number;
  wallTimeMs: number;
  concludedAt: string;
}

/** The session's story, read off its transcript (the events verbatim, in log order). */
function readTranscript(transcript: Entry[]) {
  const of = <T,>(type: string) => transcript.filter((e) => e.type === type).map((e) => ({ ...(e.data as T), at: e.recordedAt, actor: e.actor }));
  const requests = of<CallRequested>('ChamberCallRequested');
  const settled = [...of<CallSettled>('ChamberCallCompleted').map((c) => ({ ...c, ok: true })), ...of<CallSettled>('ChamberCallFailed').map((c) => ({ ...c, ok: false }))];
  const calls = requests.map((r) => ({ request: r, outcome: settled.find((s) => s.callId === r.callId) }));
  const arbiterCall = [...requests].reverse().find((r) => r.step === 'arbiter');
  // The labels of the final answers as the arbiter saw them: label -> panelist.
  const arbiterLabel = new Map(Object.entries(arbiterCall?.labels ?? {}).map(([label, panelist]) => [panelist, label]));
  return {
    proposed: of<Proposed>('ChamberSessionProposed')[0],
    approved: of<{ approvedBy: string; approvedAt: string; note: string | null; reserved: number }>('ChamberSessionApproved')[0],
    rejected: of<{ rejectedBy: string; rejectedAt: string; reason: string }>('ChamberSessionRejected')[0],
    expired: of<{ expiredAt: string }>('ChamberApprovalExpired')[0],
    cancelled: of<{ cancelledBy: string; cancelledAt: string; reason: string }>('ChamberSessionCancelled')[0],
    divergences: of<{ divergence: Divergence }>('ChamberDivergenceMeasured').map((d) => d.divergence),
    changes: of<PositionChange>('ChamberPositionChanged'),
    concluded: of<Concluded>('ChamberSessionConcluded')[0],
    followUp: of<{ decision: string; reason: string; position: string | null; by: string; at: string }>('ChamberFollowUpRecorded')[0],
    calls,
    arbiterLabel,
  };
}
type Story = ReturnType<typeof readTranscript>;

const money = (amount: number, currency: string) => `${amount.toFixed(amount >= 1 ? 2 : 4)} ${currency}`;
const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
const outcomeTone = (outcome: string | null | undefined): Tone => (outcome === 'consensus' ? 'good' : outcome === 'no_consensus' ? 'warn' : outcome === 'failed' ? 'bad' : 'muted');
const STATUS_TONE: Record<string, Tone> = { awaiting_approval: 'bad', blind: 'info', cross_exam: 'info', arbitration: 'info', consensus: 'good', no_consensus: 'warn', failed: 'bad', rejected: 'muted', expired: 'muted', cancelled: 'muted' };

function ChamberStatus(props: { status: string }) {
  return <Badge tone={STATUS_TONE[props.status] ?? 'muted'}>{props.status === 'no_consensus' ? 'no consensus' : props.status.replace(/_/g, ' ')}</Badge>;
}

function ProviderError(props: { error: ProviderErrorRecord; model?: string }) {
  const e = props.error;
  return (
    <div class="provider-error" data-testid="provider-error">
      <Badge tone="bad">{e.kind}</Badge> {e.status ? <code>HTTP {e.status}</code> : null} {props.model ? <code>{props.model}</code> : null} <span>{e.message}</span>
      {e.body ? <pre class="verbatim">{e.body}</pre> : null}
      {e.text ? <pre class="verbatim">{e.text}</pre> : null}
    </div>
  );
}

/** In the order of the labels the arbiter saw (then by panelist). */
function byLabel<T>(story: Story, items: T[], panelist: (item: T) => number | null): T[] {
  const key = (item: T) => {
    const index = panelist(item);
    return `${(index === null ? undefined : story.arbiterLabel.get(index)) ?? '~'}${String(index ?? 99).padStart(2, '0')}`;
  };
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function Panel(props: { story: Story }) {
  const p = props.story.proposed!;
  return (
    <table class="responsive" data-testid="chamber-panel">
      <caption class="sr-only">The panel</caption>
      <thead>
        <tr>
          <th scope="col">Answer</th>
          <th scope="col">Model</th>
          <th scope="col">Provider</th>
        </tr>
      </thead>
      <tbody>
        {byLabel(props.story, p.panel, (m) => m.index).map((m) => {
          const label = props.story.arbiterLabel.get(m.index);
          return (
            <tr key={m.index}>
              <th scope="row" data-label="Answer">
                {label ? <strong>Answer {label}</strong> : <span class="muted">panelist {m.index + 1}</span>}
              </th>
              <td data-label="Model">
                <code>{m.model}</code>
              </td>
              <td data-label="Provider">{m.provider}</td>
            </tr>
          );
        })}
        <tr>
          <th scope="row" data-label="Answer">
            Arbiter
          </th>
          <td data-label="Model">
            <code>{p.arbiter.model}</code>
            {p.fallbackArbiter ? <span class="small muted"> (fallback {p.fallbackArbiter.model})</span> : null}
          </td>
          <td data-label="Provider">{p.arbiter.provider}</td>
        </tr>
      </tbody>
    </table>
  );
}

function PhaseSteps(props: { status: string; story: Story }) {
  const s = props.story;
  const blind = s.divergences.find((d) => d.stage === 'blind');
  const crossHeld = s.calls.some((c) => c.request.step === 'cross_exam');
  const order = ['blind', 'cross_exam', 'arbitration'];
  const at = order.indexOf(props.status);
  const steps: Array<[string, string, string]> = [
    ['blind', 'Blind answers', `${s.calls.filter((c) => c.request.step === 'blind' && c.outcome?.ok).length} of ${s.proposed?.panel.length ?? '?'} answered`],
    ['cross_exam', 'Cross-examination', crossHeld ? `${s.changes.length} position change${s.changes.length === 1 ? '' : 's'}` : blind ? (blind.divergent ? 'not held' : 'not needed: no divergence') : s.concluded ? 'not held' : 'if the answers diverge'],
    ['arbitration', 'Arbitration', s.concluded ? (s.concluded.outcome === 'no_consensus' ? 'no consensus' : s.concluded.outcome) : 'the arbiter judges'],
  ];
  return (
    <ol class="ladder chamber-steps" aria-label="Phases">
      {steps.map(([key, title, note], i) => {
        const skipped = key === 'cross_exam' && !crossHeld && (at > i || Boolean(s.concluded));
        const failed = key === 'arbitration' && s.concluded?.outcome === 'failed';
        const state = props.status === key ? 'step-current' : failed ? 'step-failed' : s.concluded || at > i ? (skipped ? 'step-passed' : 'step-done') : 'step-idle';
        return (
          <li key={key} class={`step ${state}`} aria-current={props.status === key ? 'step' : undefined}>
            <strong>{title}</strong>
            <span class="small muted">{note}</span>
          </li>
        );
      })}
    </ol>
  );
}

function DivergenceLine(props: { divergence: Divergence }) {
  const d = props.divergence;
  return (
    <div class="divergence" data-testid={`divergence-${d.stage}`}>
      <span>
        Divergence {d.stage === 'blind' ? 'of the blind answers' : 'before arbitration'}: <Meter value={d.score} label={`divergence score (${d.stage})`} invert /> against the threshold <strong>{d.threshold.toFixed(2)}</strong>{' '}
        {d.divergent ? <Badge tone="warn">divergent</Badge> : <Badge tone="good">converged</Badge>}
      </span>
      <span class="small muted">
        positions {d.positionScore.toFixed(2)} · claims {d.claimScore.toFixed(2)}
        {d.majority ? ` · majority: "${d.majority.position}" (${d.majority.count} of ${d.majority.of})` : ' · no majority'}
        {d.contradictions.length > 0 ? ` · ${d.contradictions.length} contradicting claim${d.contradictions.length === 1 ? '' : 's'}` : ''}
      </span>
    </div>
  );
}

function Answers(props: { story: Story; step: 'blind' | 'cross_exam'; currency: string }) {
  const s = props.story;
  const calls = byLabel(s, s.calls.filter((c) => c.request.step === props.step), (c) => c.request.panelist);
  if (calls.length === 0) return null;
  const name = (panelist: number | null) => {
    const m = s.proposed?.panel.find((p) => p.index === panelist);
    const label = panelist === null ? undefined : s.arbiterLabel.get(panelist);
    return { label, model: m?.model ?? '?' };
  };
  return (
    <table class="responsive" data-testid={`answers-${props.step}`}>
      <caption class="sr-only">{props.step === 'blind' ? 'Blind answers' : 'Answers after cross-examination'}</caption>
      <thead>
        <tr>
          <th scope="col">Answer</th>
          <th scope="col">Position</th>
          <th scope="col">Confidence</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {calls.map(({ request, outcome }) => {
          const who = name(request.panelist);
          const answer = outcome?.ok ? (outcome.output as PanelAnswer | CrossExamAnswer) : undefined;
          return (
            <tr key={request.callId}>
              <th scope="row" data-label="Answer">
                {who.label ? `Answer ${who.label}` : `panelist ${(request.panelist ?? 0) + 1}`} <span class="small muted">{who.model}</span>
                {request.attempt > 1 ? <span class="small muted"> · attempt {request.attempt}</span> : null}
              </th>
              <td data-label="Position" class="wide">
                {answer ? (
                  <>
                    <strong>{answer.position}</strong>
                    {'revised' in answer && answer.revised ? <Badge tone="warn">revised</Badge> : null}
                    {answer.keyClaims.length > 0 ? <div class="small muted">{answer.keyClaims.join(' · ')}</div> : null}
                  </>
                ) : outcome?.error ? (
                  <ProviderError error={outcome.error} />
                ) : (
                  <span class="muted">waiting for the provider…</span>
                )}
              </td>
              <td data-label="Confidence">{answer ? <Meter value={answer.confidence} label={`confidence of ${who.label ?? request.panelist} (${props.step})`} /> : <span class="muted">–</span>}</td>
              <td data-label="Cost">{outcome ? `${money(outcome.cost, props.currency)} · ${seconds(outcome.latencyMs)}` : '–'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** How the operator reads a panelist: the label the arbiter saw (when there was an arbitration) and the model. */
function panelistName(story: Story, panelist: number | null): string {
  const model = story.proposed?.panel.find((p) => p.index === panelist)?.model ?? '?';
  const label = panelist === null ? undefined : story.arbiterLabel.get(panelist);
  return label ? `Answer ${label} (${model})` : `${model}`;
}

/** A change names labels of its own cross-examination prompt (shuffled per call): read back to panelists here. */
function PositionChanges(props: { story: Story }) {
  const s = props.story;
  if (s.changes.length === 0) return <Empty>No panelist changed its position.</Empty>;
  return (
    <ul class="plain" data-testid="position-changes" aria-label="Position changes">
      {s.changes.map((c, i) => {
        const call = [...s.calls].reverse().find((x) => x.request.step === 'cross_exam' && x.request.panelist === c.panelist);
        const toward = c.towardLabel ? call?.request.labels[c.towardLabel] : undefined;
        return (
          <li key={i}>
            <strong>{panelistName(s, c.panelist)}</strong> moved from <q>{c.from}</q> to <q>{c.to}</q>
            {c.towardLabel ? (
              <>
                {' '}
                toward <strong>{toward !== undefined ? panelistName(s, toward) : `label ${c.towardLabel}`}</strong> <span class="small muted">(label {c.towardLabel} in its prompt)</span>
              </>
            ) : null}{' '}
            {c.towardBlindMajority ? <Badge tone="warn">toward the blind majority</Badge> : null}
          </li>
        );
      })}
    </ul>
  );
}

function Verdict(props: { story: Story; currency: string }) {
  const c = props.story.concluded;
  if (!c) return null;
  const verdict = props.story.calls.filter((x) => x.request.step === 'arbiter' && x.outcome?.ok).at(-1)?.outcome?.output as ArbiterVerdict | undefined;
  return (
    <div class={`verdict verdict-${c.outcome}`} data-testid="chamber-verdict">
      <div class="verdict-head">
        <Badge tone={outcomeTone(c.outcome)}>{c.outcome === 'no_consensus' ? 'no consensus' : c.outcome}</Badge>
        {c.outcome === 'no_consensus' ? <strong>No consensus: founder review recommended.</strong> : c.position ? <strong>{c.position}</strong> : null}
      </div>
      {c.synthesis ? <p>{c.synthesis}</p> : null}
      {c.restsOn.length > 0 ? (
        <p class="small">
          Rests on{' '}
          {c.restsOn.map((r, i) => (
            <span key={r.label}>
              {i > 0 ? ', ' : ''}
              <strong>answer {r.label}</strong> ({r.model})
            </span>
          ))}
          {c.ownProviderWin ? (
            <>
              {' '}
              <Badge tone="warn">the arbiter's own provider</Badge>
            </>
          ) : null}
        </p>
      ) : null}
      <Facts
        items={[
          ['Blind majority', c.blindMajority ? `"${c.blindMajority.position}" (${c.blindMajority.count} of ${c.blindMajority.of})` : <span class="muted">none</span>],
          c.changedFromBlindMajority !== null && ['Against the blind majority', c.changedFromBlindMajority ? <Badge tone="info">the outcome differs</Badge> : <Badge tone="muted">the same position</Badge>],
          c.arbiter && ['Arbiter', `${c.arbiter.model}${c.arbiter.fallback ? ' (fallback)' : ''}`],
          c.selfCheck && ['Leaned on', c.selfCheck.leanedOn ? `answer ${c.selfCheck.leanedOn.label}: ${c.selfCheck.why}` : c.selfCheck.why],
          c.forcedSynthesisRefused && ['Refused', <Badge tone="bad">the arbiter claimed a consensus the divergence measure refused</Badge>],
          ['Cost', money(c.cost, props.currency)],
          ['Wall time', seconds(c.wallTimeMs)],
        ]}
      />
      <p class="small">{c.reason}</p>
      {verdict?.reasoning ? <p class="small muted">{verdict.reasoning}</p> : null}
      {c.errors.length > 0 ? (
        <>
          <h4>Provider errors</h4>
          {c.errors.map((e) => (
            <ProviderError key={e.callId} error={e.error} model={e.model} />
          ))}
        </>
      ) : null}
    </div>
  );
}

function entrySummary(entry: Entry): string {
  const d = entry.data as Record<string, unknown>;
  switch (entry.type) {
    case 'ChamberCallRequested':
      return `${String(d['step'])} call to ${String(d['model'])}`;
    case 'ChamberCallCompleted':
      return `${String(d['model'])} answered (${String(d['cost'])})`;
    case 'ChamberCallFailed':
      return `${String(d['model'])} failed: ${String((d['error'] as { message?: string } | undefined)?.message ?? '')}`;
    case 'ChamberDivergenceMeasured':
      return `score ${String((d['divergence'] as { score?: number } | undefined)?.score)}`;
    default:
      return '';
  }
}

function Transcript(props: { transcript: Entry[] }) {
  return (
    <ol class="plain chamber-transcript" data-testid="chamber-transcript" aria-label="Transcript">
      {props.transcript.map((e) => {
        const d = e.data as Record<string, unknown>;
        const text = typeof d['prompt'] === 'string' ? d['prompt'] : typeof d['text'] === 'string' ? d['text'] : undefined;
        return (
          <li key={e.revision}>
            <details>
              <summary>
                <span class="muted small">#{e.revision}</span> <strong>{e.type}</strong> <span class="small">{entrySummary(e)}</span> <Time at={e.recordedAt} />
              </summary>
              {typeof d['system'] === 'string' ? <pre class="verbatim">{d['system']}</pre> : null}
              {text !== undefined ? <pre class="verbatim">{text}</pre> : null}
              <pre class="verbatim small">{JSON.stringify(d, null, 2)}</pre>
            </details>
          </li>
        );
      })}
    </ol>
  );
}

function SessionDetail(props: { sessionId: string }) {
  const view = useQuery<ChamberSessionView>(`/v1/chamber/sessions/${encodeURIComponent(props.sessionId)}`, {}, LIVE);
  const v = view.data;
  if (!v) return view.error ? <ErrorNote error={view.error} what={`session ${props.sessionId}`} /> : <Loading what={`session ${props.sessionId}`} />;
  const s = v.summary;
  const story = readTranscript(v.transcript);
  const p = story.proposed;
  const blind = story.divergences.find((d) => d.stage === 'blind');
  const final = story.divergences.find((d) => d.stage === 'final');
  return (
    <div class="chamber-session" data-testid="chamber-session" data-status={s.status}>
      <div class="card-head">
        <h2 id="chamber-title">{s.question}</h2>
        <ChamberStatus status={s.status} />
      </div>
      {p?.context ? <p class="chamber-context">{p.context}</p> : null}
      <Facts
        items={[
          ['Proposed', <span>
              <AgentName id={s.proposedBy} /> <Time at={s.proposedAt} />
            </span>],
          p?.rationale && ['Why', p.rationale],
          story.approved && ['Approved', <span>
              <AgentName id={story.approved.approvedBy} /> <Time at={story.approved.approvedAt} />
              {story.approved.note ? <span class="small"> “{story.approved.note}”</span> : null}
            </span>],
          story.rejected && ['Rejected', <span>
              <AgentName id={story.rejected.rejectedBy} />: {story.rejected.reason}
            </span>],
          story.expired && ['Expired', <Time at={story.expired.expiredAt} />],
          story.cancelled && ['Cancelled', <span>
              <AgentName id={story.cancelled.cancelledBy} />: {story.cancelled.reason}
            </span>],
          s.status === 'awaiting_approval' && p && ['Awaiting approval', <span>
              until <Time at={p.approvalExpiresAt} /> · <a href="/inbox">decide in the inbox</a>
            </span>],
          ['Cost', <span data-testid="chamber-cost">
              {money(s.cost, s.currency)} of at most {money(s.maxCost, s.currency)}
              {p ? <span class="small muted"> (ceiling {money(p.costCeiling, s.currency)})</span> : null}
            </span>],
          s.pendingCalls > 0 && ['Calls in flight', s.pendingCalls],
          s.link && ['For', <a href={`/tribunal/${encodeURIComponent(s.link.id)}`}>proposal {s.link.id}</a>],
        ]}
      />
      {p ? (
        <p class="small muted">
          Rules: divergence threshold {p.rules.divergenceThreshold.toFixed(2)} · cross-examination {p.rules.crossExamination ? 'on' : 'off'} · at least {p.rules.minPanelists} answers · recusal {p.rules.recusal.replace(/_/g, ' ')}
        </p>
      ) : null}
      {p ? (
        <>
          <h3>Panel</h3>
          <p class="small muted">The arbiter saw the answers by label only, shuffled; the models behind them are shown here for the operator.</p>
          <Panel story={story} />
          {p.excluded.length > 0 ? (
            <p class="small">
              Left out: {p.excluded.map((x) => `${x.model} (${x.reason})`).join('; ')}
            </p>
          ) : null}
        </>
      ) : null}
      {story.approved ? (
        <>
          <h3>Phases</h3>
          <PhaseSteps status={s.status} story={story} />
          <h4>Blind answers</h4>
          <Answers story={story} step="blind" currency={s.currency} />
          {blind ? <DivergenceLine divergence={blind} /> : null}
          {story.calls.some((c) => c.request.step === 'cross_exam') ? (
            <>
              <h4>Cross-examination</h4>
              <Answers story={story} step="cross_exam" currency={s.currency} />
              <PositionChanges story={story} />
            </>
          ) : null}
          {final ? <DivergenceLine divergence={final} /> : null}
        </>
      ) : null}
      {story.concluded ? (
        <>
          <h3>Verdict</h3>
          <Verdict story={story} currency={s.currency} />
        </>
      ) : null}
      {story.concluded ? (
        <>
          <h3>Follow-up</h3>
          {story.followUp ? (
            <p data-testid="chamber-follow-up">
              <Status value={story.followUp.decision} /> by <AgentName id={story.followUp.by} /> <Time at={story.followUp.at} />: {story.followUp.reason}
              {story.followUp.position ? <span> (took “{story.followUp.position}”)</span> : null}
            </p>
          ) : (
            <Empty>No follow-up yet: an operator records whether the outcome was accepted or overridden (RecordChamberFollowUp).</Empty>
          )}
        </>
      ) : null}
      <h3>Transcript ({v.transcript.length} events)</h3>
      <Transcript transcript={v.transcript} />
    </div>
  );
}

function SessionList(props: { sessions: ChamberSessionSummary[]; selected: string | undefined }) {
  return (
    <ul class="pick-list" aria-label="Chamber sessions">
      {props.sessions.map((s) => (
        <li key={s.sessionId}>
          <a href={`/chamber/${encodeURIComponent(s.sessionId)}`} aria-current={s.sessionId === props.selected ? 'true' : undefined}>
            <span class="pick-title">{s.question}</span>
            <span class="pick-meta">
              <ChamberStatus status={s.status} />
              {s.followUp ? <Status value={s.followUp} /> : null}
              <span class="muted small">
                {money(s.cost, s.currency)} of {money(s.maxCost, s.currency)}
              </span>
              <Time at={s.updatedAt} />
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

function Figures() {
  const budget = useQuery<ChamberBudgetView>('/v1/chamber/budget', {}, LIVE);
  const stats = useQuery<ChamberStats>('/v1/chamber/stats', {}, LIVE);
  const b = budget.data;
  const st = stats.data;
  return (
    <>
      <ErrorNote error={budget.error} what="the chamber budget" />
      <ErrorNote error={stats.error} what="the chamber figures" />
      {b ? (
        <div class="tiles" aria-label="Chamber budget" data-testid="chamber-budget">
          <Tile label={`spent in ${b.month}`} value={money(b.spent, b.currency)} />
          <Tile label="reserved by sessions not yet settled" value={money(b.reserved, b.currency)} />
          <Tile label={`the month's budget (${percent(b.monthlyBudget > 0 ? (b.spent + b.reserved) / b.monthlyBudget : null, 2)} spent or reserved; ${money(b.remaining, b.currency)} left)`} value={money(b.monthlyBudget, b.currency)} />
          <Tile label={`sessions today (at most ${b.sessionsPerDay})`} value={b.sessionsToday} />
        </div>
      ) : null}
      {st ? (
        <div class="tiles" aria-label="Chamber figures">
          <Tile label={`concluded in ${st.windowDays} days`} value={st.concluded} />
          <Tile label="no consensus" value={percent(st.noConsensusRate)} />
          <Tile label="blind phases that diverged" value={percent(st.divergenceRate)} />
          <Tile label="cross-examined" value={percent(st.crossExamRate)} />
          <Tile label={`arbiter's own provider won (${st.ownProviderSample} of at least ${st.minSample})`} value={percent(st.ownProviderWinShare)} />
          <Tile label={`outcome differs from the blind majority (${st.liftSample})`} value={percent(st.lift)} />
          <Tile label="moves toward the blind majority" value={st.conformityChanges} />
        </div>
      ) : null}
    </>
  );
}

function Chamber(props: PageProps) {
  const list = usePagedQuery<ChamberSessionSummary>('/v1/chamber/sessions', 'sessions', {}, LIVE);
  const sessions = list.data?.items ?? [];
  const detailRef = useScrollIntoViewOnChange(props.rest[0]);
  const selected = props.rest[0] ?? sessions[0]?.sessionId;
  return (
    <>
      <Figures />
      <div class="split">
        <Section title="Sessions">
          <ErrorNote error={list.error} what="the chamber sessions" />
          {list.loading && !list.data ? <Loading what="sessions" /> : null}
          {list.data && sessions.length === 0 ? <Empty>No session yet. A pipeline agent or an operator proposes one with ProposeChamberSession (npm run demo:chamber runs one).</Empty> : <SessionList sessions={sessions} selected={selected} />}
          <ShowMore list={list.data} loading={list.loading} onMore={list.showMore} what="sessions" />
        </Section>
        <section class="card" ref={detailRef} aria-labelledby="chamber-title">
          {selected ? <SessionDetail key={selected} sessionId={selected} /> : <Empty>Select a session.</Empty>}
        </section>
      </div>
    </>
  );
}

export const chamberPage: ConsolePage = { path: 'chamber', label: 'Chamber', title: 'Deliberation Chamber', component: Chamber };
