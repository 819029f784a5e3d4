/**
 * The human inbox: everything waiting for a person (tribunal escalations, voting sessions that
 * require a human, dialectic recoveries at tier 3, chamber sessions awaiting approval), and the decision signed here, in the browser,
 * with the operator's key (loaded from its key file into this page's memory; never sent), then
 * posted to POST /v1/commands. The signed command then shows in the event log, verified.
 */
import type { ChamberSessionSummary, ChamberSessionView, Condition, DialecticSessionSummary, DialecticSessionView, ProposalSummary, ProposalView, VotingSessionSummary, VotingSessionView } from '@agora/contracts';
import { resolutionPayload } from '@agora/domain-dialectic/browser';
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { postCommand, usePagedQuery, useQuery, type PagedList } from '../lib/api';
import { eventLog } from '../lib/event-log';
import { readKeyFile, setOperatorKey, useOperatorKey } from '../lib/operator';
import type { OperatorKey } from '../lib/signing';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Alert, Badge, Empty, ErrorNote, Section, ShowMore, Time } from '../ui';
import { SignatureBadge } from './events';

function KeyPanel() {
  const key = useOperatorKey();
  const [error, setError] = useState<string | undefined>(undefined);
  const [agentId, setAgentId] = useState('');
  const file = useRef<HTMLInputElement>(null);
  const load = async () => {
    setError(undefined);
    try {
      setOperatorKey(await readKeyFile(file.current, agentId));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  if (key)
    return (
      <div class="keybar" role="status">
        <span>
          Signing as <strong>{key.agentId}</strong> <span class="muted small mono">{key.publicKey.slice(0, 24)}…</span>
        </span>
        <span class="small muted">The key is in this page's memory only; it is never sent. Reloading the page forgets it.</span>
        <button type="button" onClick={() => setOperatorKey(undefined)}>
          Forget the key
        </button>
      </div>
    );
  return (
    <form
      class="keybar"
      aria-label="Operator key"
      onSubmit={(e) => {
        e.preventDefault();
        void load();
      }}
    >
      <label>
        Operator key file
        <input ref={file} type="file" accept=".json,application/json" name="keyfile" />
      </label>
      <label>
        Operator id <span class="small">(if the file names none)</span>
        <input value={agentId} onInput={(e) => setAgentId((e.target as HTMLInputElement).value)} name="agentId" autoComplete="off" size={14} />
      </label>
      <button type="submit" class="primary">
        Load key
      </button>
      <span class="small muted">Read in this browser only: the secret never leaves the page.</span>
      <Alert message={error} />
    </form>
  );
}

type Outcome = { state: 'idle' } | { state: 'sending' } | { state: 'refused'; code: string; message: string } | { state: 'accepted'; commandId: string; events: string[] };

/** Signs `type` with the loaded key, posts it, and then follows the command into the event log. */
function useDecision() {
  const [outcome, setOutcome] = useState<Outcome>({ state: 'idle' });
  const send = async (key: OperatorKey, type: string, payload: Record<string, unknown>) => {
    setOutcome({ state: 'sending' });
    try {
      const envelope = await key.sign(type, payload);
      const reply = await postCommand(envelope);
      if (!reply.ok) setOutcome({ state: 'refused', code: reply.error.code, message: reply.error.message });
      else setOutcome({ state: 'accepted', commandId: envelope.commandId, events: reply.result.events });
    } catch (e) {
      setOutcome({ state: 'refused', code: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  };
  return { outcome, send };
}

function InLog(props: { commandId: string }) {
  const [found, setFound] = useState<{ type: string; mark: Parameters<typeof SignatureBadge>[0]['mark'] } | undefined>(undefined);
  const started = useRef(false);
  if (!started.current) {
    started.current = true;
    eventLog.start();
    void eventLog.waitFor((e) => e.event.metadata?.['commandId'] === props.commandId).promise.then((e) => setFound({ type: e.event.type, mark: e.mark }));
  }
  return found ? (
    <span>
      In the log: <strong>{found.type}</strong> <SignatureBadge mark={found.mark} /> <a href={`/events?actor=${encodeURIComponent(String(found.mark && 'actor' in found.mark ? found.mark.actor : ''))}`}>see the log</a>
    </span>
  ) : (
    <span class="muted">Waiting for it in the log…</span>
  );
}

function OutcomeNote(props: { outcome: Outcome }) {
  const o = props.outcome;
  if (o.state === 'idle') return null;
  if (o.state === 'sending') return <p role="status">Signing and sending…</p>;
  if (o.state === 'refused')
    return (
      <p class="error" role="alert">
        Refused: <code>{o.code}</code> {o.message}
      </p>
    );
  return (
    <p class="notice" role="status">
      Decided: {o.events.join(', ')}. <InLog commandId={o.commandId} />
    </p>
  );
}

function Choice(props: { name: string; value: string; current: string; onChange: (v: string) => void; children: ComponentChildren }) {
  return (
    <label class="choice">
      <input type="radio" name={props.name} value={props.value} checked={props.current === props.value} onChange={() => props.onChange(props.value)} />
      {props.children}
    </label>
  );
}

function DecisionForm(props: { id: string; choices: Array<[string, string]>; onSubmit: (decision: string, reason: string) => void; outcome: Outcome; reasonLabel?: string; children?: ComponentChildren }) {
  const key = useOperatorKey();
  const [decision, setDecision] = useState('');
  const [reason, setReason] = useState('');
  const busy = props.outcome.state === 'sending';
  const done = props.outcome.state === 'accepted';
  if (done) return <OutcomeNote outcome={props.outcome} />;
  return (
    <form
      class="decision"
      aria-label={`Decision on ${props.id}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (decision && reason.trim()) props.onSubmit(decision, reason.trim());
      }}
    >
      <fieldset disabled={busy || done}>
        <legend>Decision</legend>
        <div class="choices">
          {props.choices.map(([value, label]) => (
            <Choice key={value} name={`decision-${props.id}`} value={value} current={decision} onChange={setDecision}>
              {label}
            </Choice>
          ))}
        </div>
        {props.children}
        <label>
          {props.reasonLabel ?? 'Reason (recorded with the decision)'}
          <textarea name="reason" rows={2} required value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit" class="primary" disabled={!key || !decision || !reason.trim()}>
          {key ? `Sign as ${key.agentId} and send` : 'Load an operator key to sign'}
        </button>
      </fieldset>
      <OutcomeNote outcome={props.outcome} />
    </form>
  );
}

function TribunalItem(props: { summary: ProposalSummary }) {
  const detail = useQuery<ProposalView>(`/v1/proposal/proposals/${encodeURIComponent(props.summary.proposalId)}`, {}, ['proposal']);
  const key = useOperatorKey();
  const { outcome, send } = useDecision();
  const p = detail.data;
  const pending = p?.escalations.filter((e) => e.decision === null).at(-1);
  return (
    <article class={outcome.state === 'accepted' ? 'item item-done' : 'item'} aria-labelledby={`t-${props.summary.proposalId}`}>
      <header>
        <Badge tone="info">tribunal</Badge>{' '}
        <h3 id={`t-${props.summary.proposalId}`}>
          <a href={`/tribunal/${encodeURIComponent(props.summary.proposalId)}`}>{props.summary.title}</a>
        </h3>
        <span class="muted small">
          by <AgentName id={props.summary.proposer} />
        </span>
      </header>
      <ErrorNote error={detail.error} what="the proposal" />
      {p && pending ? (
        <>
          <p>
            Escalated <Time at={pending.escalatedAt} />: <strong>{pending.reason.replace(/_/g, ' ')}</strong> after round {pending.round}
            {pending.uncovered.length > 0 ? `; no reviewer for ${pending.uncovered.join(', ')}` : ''}.
          </p>
          {pending.openObjections.length > 0 ? (
            <ul class="small">
              {p.objections
                .filter((o) => pending.openObjections.includes(o.objectionId))
                .map((o) => (
                  <li key={o.objectionId}>
                    <Badge tone="info">{o.constitution}</Badge> {o.constraint}: {o.scenario}
                  </li>
                ))}
            </ul>
          ) : null}
          <DecisionForm
            id={props.summary.proposalId}
            outcome={outcome}
            choices={[
              ['approve', pending.openObjections.length > 0 ? 'Approve (over the open objections)' : 'Approve'],
              ['reject', 'Reject'],
              ['send_back', 'Send back for another round'],
            ]}
            onSubmit={(decision, reason) => key && void send(key, 'DecideEscalation', { proposalId: p.proposalId, escalation: pending.escalation, decision, reason })}
          />
        </>
      ) : p ? (
        <OutcomeNote outcome={outcome} />
      ) : null}
    </article>
  );
}

function VotingItem(props: { summary: VotingSessionSummary }) {
  const detail = useQuery<VotingSessionView>(`/v1/voting/sessions/${encodeURIComponent(props.summary.sessionId)}`, {}, ['voting_session']);
  const key = useOperatorKey();
  const { outcome, send } = useDecision();
  const s = detail.data;
  return (
    <article class={outcome.state === 'accepted' ? 'item item-done' : 'item'} aria-labelledby={`v-${props.summary.sessionId}`}>
      <header>
        <Badge tone="info">voting</Badge>{' '}
        <h3 id={`v-${props.summary.sessionId}`}>
          <a href={`/voting/${encodeURIComponent(props.summary.sessionId)}`}>{props.summary.actionType}</a>
        </h3>
        <span class="muted small">
          for <AgentName id={props.summary.requestingAgent} /> · {props.summary.riskLevel} risk
        </span>
      </header>
      {s?.recommendation?.escalationReason === 'person_decides' ? (
        <p>No validator votes on this one: it was created for a person to decide.</p>
      ) : s?.recommendation ? (
        <p>
          {s.consensus?.replace(/_/g, ' ')}; the rules ask a human: <strong>{s.recommendation.escalationReason?.replace(/_/g, ' ')}</strong>.{' '}
          {s.tally ? (
            <span class="small muted">
              {s.tally.approve} approve, {s.tally.deny} deny, {s.tally.abstain} abstain
            </span>
          ) : null}
        </p>
      ) : null}
      <DecisionForm
        id={props.summary.sessionId}
        outcome={outcome}
        choices={[
          ['approve', 'Approve the action'],
          ['deny', 'Deny the action'],
        ]}
        onSubmit={(decision, reason) => key && void send(key, 'DecideVotingEscalation', { sessionId: props.summary.sessionId, decision, reason })}
      />
    </article>
  );
}

function parseConditions(text: string): Condition[] {
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed)) throw new Error('conditions are a JSON list of {"operation", "parameters"}');
  return parsed.map((c: { operation?: unknown; parameters?: unknown }) => {
    if (typeof c?.operation !== 'string') throw new Error('every condition needs an "operation"');
    return { operation: c.operation, parameters: (c.parameters ?? {}) as Condition['parameters'] };
  });
}

function DialecticItem(props: { summary: DialecticSessionSummary }) {
  const detail = useQuery<DialecticSessionView>(`/v1/dialectic/sessions/${encodeURIComponent(props.summary.sessionId)}`, {}, ['dialectic_session']);
  const key = useOperatorKey();
  const { outcome, send } = useDecision();
  const s = detail.data;
  const lastPosition = s ? [...s.messages].reverse().find((m) => m.rootCause !== null && m.conditions !== null) : undefined;
  const [rootCause, setRootCause] = useState<string | undefined>(undefined);
  const [conditions, setConditions] = useState<string | undefined>(undefined);
  const [formError, setFormError] = useState<string | undefined>(undefined);
  const rootCauseText = rootCause ?? lastPosition?.rootCause ?? '';
  const conditionsText = conditions ?? JSON.stringify(lastPosition?.conditions ?? []);
  const submit = async (decision: string, reasoning: string) => {
    if (!key || !s) return;
    setFormError(undefined);
    if (decision === 'stay_paused') return send(key, 'DecideRecovery', { sessionId: s.sessionId, decision, reasoning });
    let parsed: Condition[];
    try {
      parsed = parseConditions(conditionsText);
    } catch (e) {
      return setFormError(e instanceof Error ? e.message : String(e));
    }
    if (!rootCauseText.trim()) return setFormError('Resuming needs a root cause.');
    // The operator signs the resolution it decides, exactly as the service will rebuild it.
    const payload = resolutionPayload({ sessionId: s.sessionId, agentId: s.agentId, reviewer: s.reviewer, pause: s.pause, rootCause: rootCauseText.trim(), conditions: parsed, decidedBy: 'operator', escalation: s.escalations.at(-1)?.escalation ?? null, decider: key.agentId });
    const signature = await key.signResolution(payload);
    return send(key, 'DecideRecovery', { sessionId: s.sessionId, decision, reasoning, rootCause: payload.rootCause, conditions: parsed, publicKey: key.publicKey, signature });
  };
  return (
    <article class={outcome.state === 'accepted' ? 'item item-done' : 'item'} aria-labelledby={`d-${props.summary.sessionId}`}>
      <header>
        <Badge tone="info">dialectic</Badge>{' '}
        <h3 id={`d-${props.summary.sessionId}`}>
          <a href={`/dialectic/${encodeURIComponent(props.summary.sessionId)}`}>Recovery of {props.summary.agentId}</a>
        </h3>
        <span class="muted small">
          pause {props.summary.pause} · reviewer <AgentName id={props.summary.reviewer} />
        </span>
      </header>
      {s ? (
        <p>
          {s.reason}. Tier 3: {s.escalations.at(-1)?.reason.replace(/_/g, ' ')}
          {s.escalations.at(-1)?.note ? ` (${s.escalations.at(-1)?.note})` : ''}. The agent stays paused until a person decides.
        </p>
      ) : null}
      <DecisionForm
        id={props.summary.sessionId}
        outcome={outcome}
        reasonLabel="Reasoning (recorded with the decision)"
        choices={[
          ['resume', 'Resume under a resolution (signed by you)'],
          ['stay_paused', 'Keep it paused'],
        ]}
        onSubmit={(decision, reason) => void submit(decision, reason)}
      >
        <details class="resume-terms">
          <summary>Resolution terms (for resume; checked against the hard limits)</summary>
          <label>
            Root cause
            <input value={rootCauseText} onInput={(e) => setRootCause((e.target as HTMLInputElement).value)} name="rootCause" />
          </label>
          <label>
            Conditions (JSON)
            <textarea rows={2} class="mono" value={conditionsText} onInput={(e) => setConditions((e.target as HTMLTextAreaElement).value)} name="conditions" />
          </label>
        </details>
        {formError ? (
          <p class="error" role="alert">
            {formError}
          </p>
        ) : null}
      </DecisionForm>
    </article>
  );
}

function ChamberItem(props: { summary: ChamberSessionSummary }) {
  const detail = useQuery<ChamberSessionView>(`/v1/chamber/sessions/${encodeURIComponent(props.summary.sessionId)}`, {}, ['chamber_session']);
  const key = useOperatorKey();
  const { outcome, send } = useDecision();
  const s = props.summary;
  const proposed = detail.data?.transcript.find((e) => e.type === 'ChamberSessionProposed')?.data as { context?: string; rationale?: string; approvalExpiresAt?: string; panel?: { model: string }[] } | undefined;
  return (
    <article class={outcome.state === 'accepted' ? 'item item-done' : 'item'} aria-labelledby={`c-${s.sessionId}`}>
      <header>
        <Badge tone="info">chamber</Badge>{' '}
        <h3 id={`c-${s.sessionId}`}>
          <a href={`/chamber/${encodeURIComponent(s.sessionId)}`}>{s.question}</a>
        </h3>
        <span class="muted small">
          by <AgentName id={s.proposedBy} /> · at most {s.maxCost.toFixed(s.maxCost >= 1 ? 2 : 4)} {s.currency}
        </span>
      </header>
      {proposed ? (
        <p>
          {proposed.context} {proposed.rationale ? <span class="small muted">Why: {proposed.rationale}</span> : null}
          <br />
          <span class="small">
            Panel: {(proposed.panel ?? []).map((p) => p.model).join(', ')}; arbiter {s.arbiter}. Nothing is called before approval; approving reserves the maximum cost. Expires <Time at={proposed.approvalExpiresAt} />.
          </span>
        </p>
      ) : null}
      <DecisionForm
        id={s.sessionId}
        outcome={outcome}
        reasonLabel="Note or reason (recorded with the decision)"
        choices={[
          ['approve', 'Approve the session'],
          ['reject', 'Reject the session'],
        ]}
        onSubmit={(decision, reason) =>
          key && void (decision === 'approve' ? send(key, 'ApproveChamberSession', { sessionId: s.sessionId, note: reason }) : send(key, 'RejectChamberSession', { sessionId: s.sessionId, reason }))
        }
      />
    </article>
  );
}

/** Everything waiting for a person, as four paged queries (shared by the page and its navigation badge). */
function useWaiting() {
  const tribunal = usePagedQuery<ProposalSummary>('/v1/proposal/proposals', 'proposals', { status: 'escalated' }, ['proposal']);
  const voting = usePagedQuery<VotingSessionSummary>('/v1/voting/pending-sessions', 'sessions', { awaitingOperator: true }, ['voting_session']);
  const dialectic = usePagedQuery<DialecticSessionSummary>('/v1/dialectic/sessions', 'sessions', { status: 'awaiting_operator' }, ['dialectic_session']);
  const chamber = usePagedQuery<ChamberSessionSummary>('/v1/chamber/sessions', 'sessions', { status: 'awaiting_approval' }, ['chamber_session']);
  return { tribunal, voting, dialectic, chamber };
}

/** How many a list shows: `…` while loading, `100+` when more follow. */
const countOf = (list: PagedList<unknown> | undefined): string => (list ? `${list.items.length}${list.more ? '+' : ''}` : '…');

function Inbox(_props: PageProps) {
  const { tribunal, voting, dialectic, chamber } = useWaiting();
  // Items stay on the page once decided (their outcome is shown) until the page is left.
  const seen = useRef({ tribunal: new Map<string, ProposalSummary>(), voting: new Map<string, VotingSessionSummary>(), dialectic: new Map<string, DialecticSessionSummary>(), chamber: new Map<string, ChamberSessionSummary>() });
  for (const p of tribunal.data?.items ?? []) seen.current.tribunal.set(p.proposalId, p);
  for (const s of voting.data?.items ?? []) seen.current.voting.set(s.sessionId, s);
  for (const s of dialectic.data?.items ?? []) seen.current.dialectic.set(s.sessionId, s);
  for (const s of chamber.data?.items ?? []) seen.current.chamber.set(s.sessionId, s);
  const lists = [tribunal, voting, dialectic, chamber];
  const waiting = lists.reduce((n, l) => n + (l.data?.items.length ?? 0), 0);
  return (
    <>
      <p class="lede">
        {waiting}
        {lists.some((l) => l.data?.more) ? '+' : ''} waiting for a person. Each decision is a command signed here with your operator key and recorded in the log.
      </p>
      <Section title="Your key">
        <KeyPanel />
      </Section>
      <ErrorNote error={tribunal.error ?? voting.error ?? dialectic.error ?? chamber.error} what="what is waiting" />
      <Section title={`Tribunal escalations (${countOf(tribunal.data)})`} id="inbox-tribunal">
        {seen.current.tribunal.size === 0 ? <Empty>No escalated proposal.</Empty> : [...seen.current.tribunal.values()].map((p) => <TribunalItem key={p.proposalId} summary={p} />)}
        <ShowMore list={tribunal.data} loading={tribunal.loading} onMore={tribunal.showMore} what="escalations" />
      </Section>
      <Section title={`Votes that need a human (${countOf(voting.data)})`} id="inbox-voting">
        {seen.current.voting.size === 0 ? <Empty>No voting session waits for a human.</Empty> : [...seen.current.voting.values()].map((s) => <VotingItem key={s.sessionId} summary={s} />)}
        <ShowMore list={voting.data} loading={voting.loading} onMore={voting.showMore} what="sessions" />
      </Section>
      <Section title={`Recoveries at tier 3 (${countOf(dialectic.data)})`} id="inbox-dialectic">
        {seen.current.dialectic.size === 0 ? <Empty>No recovery waits for an operator.</Empty> : [...seen.current.dialectic.values()].map((s) => <DialecticItem key={s.sessionId} summary={s} />)}
        <ShowMore list={dialectic.data} loading={dialectic.loading} onMore={dialectic.showMore} what="recoveries" />
      </Section>
      <Section title={`Chamber sessions to approve (${countOf(chamber.data)})`} id="inbox-chamber">
        {seen.current.chamber.size === 0 ? <Empty>No chamber session waits for approval.</Empty> : [...seen.current.chamber.values()].map((s) => <ChamberItem key={s.sessionId} summary={s} />)}
        <ShowMore list={chamber.data} loading={chamber.loading} onMore={chamber.showMore} what="sessions" />
      </Section>
    </>
  );
}

function useInboxBadge(): number | undefined {
  const { tribunal, voting, dialectic, chamber } = useWaiting();
  const total = [tribunal, voting, dialectic, chamber].reduce((n, l) => n + (l.data?.items.length ?? 0), 0);
  return total || undefined;
}

export const inboxPage: ConsolePage = { path: 'inbox', label: 'Human inbox', title: 'Human inbox', component: Inbox, useBadge: useInboxBadge };
