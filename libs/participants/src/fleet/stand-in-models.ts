/**
 * A stand-in for the models behind a fleet, at the network boundary: the provider stand-in servers
 * (libs/providers) answer each participant's request from what its prompt says, the way an obedient
 * model following the shipped prompts would, so the protocols run end to end (for the demo and the
 * tests). Which role asks is read from the shipped system prompts; what is answered:
 * - reviewers: the risk constitution objects to a plan that names no rollback (constraint, scenario,
 *   suggested revision, citing the proposal's evidence); every other constitution approves;
 * - the executive: a revision that adds each objection's suggested revision to the plan, answering them all;
 * - validators: approve, from their specializations, unless the summary says the action cannot be undone;
 * - recoveries: a thesis, an antithesis with a counter-proposal, and syntheses that adopt the other
 *   party's latest position and agree;
 * - debaters: the persona stand-in (stand-in-debaters.ts).
 * `override` answers first when it returns a reply (a malformed answer, an error, for a test).
 */
import type { StandInReply, StandInRequest, StandInScript } from '@agora/providers';
import { personaModel } from './stand-in-debaters.js';

const tokens = (request: StandInRequest, reply: unknown) => ({ input: Math.ceil((request.system.length + request.prompt.length) / 4), output: Math.ceil(JSON.stringify(reply).length / 4) });
const json = (request: StandInRequest, reply: unknown): StandInReply => ({ json: reply, usage: tokens(request, reply) });

const between = (text: string, start: string, end: string): string => {
  const from = text.indexOf(start);
  if (from < 0) return '';
  const to = text.indexOf(end, from + start.length);
  return text.slice(from + start.length, to < 0 ? undefined : to).trim();
};

function review(request: StandInRequest): unknown {
  const constitution = /one constitution only: ([a-z0-9_]+)/.exec(request.system)?.[1] ?? 'unknown';
  const plan = between(request.prompt, '--- plan ---', '--- end of plan ---');
  const evidence = between(request.prompt, 'Evidence the proposal gives:', 'Objections raised so far')
    .split('\n')
    .map((line) => /^- ([^:]+): (.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ ref: m[1]!, summary: m[2]! }));
  const none = { constraint: null, scenario: null, suggestedRevision: null, rejectReason: null };
  if (constitution === 'risk' && !/roll ?back/i.test(plan)) {
    return {
      verdict: 'object',
      reasoning: 'The plan changes production in one step and says nothing of how to undo it.',
      citations: evidence.slice(0, 1),
      constraint: 'Risk: an irreversible step needs a way back (a rollback, a staged rollout or a kill switch).',
      scenario: 'The new version fails under real traffic an hour after the switch; with no rollback path the outage lasts until a fix is written and shipped.',
      suggestedRevision: 'Add a rollback: keep the previous version deployable and switch back automatically if the error rate doubles within the first hour.',
      rejectReason: null,
    };
  }
  return { verdict: 'approve', reasoning: `Nothing in the plan breaks the ${constitution} constitution${evidence.length > 0 ? `; ${evidence[0]!.ref} supports it` : ''}.`, citations: evidence.slice(0, 1), ...none };
}

function revision(request: StandInRequest): unknown {
  const plan = between(request.prompt, '--- plan ---', '--- end of plan ---');
  const objections = between(request.prompt, 'Open objections:', 'Write revision')
    .split('\n')
    .map((line) => /^- (\S+) \(([a-z0-9_]+), by [^)]+\): .*?(?:Suggested revision: (.*?))?(?: Reject because: .*)?$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  const additions = objections.map((m) => `${m[3] ?? `Answer the ${m[2]} objection.`} (answers the ${m[2]} objection)`);
  return { title: null, problem: null, body: `${plan}\n\n${additions.join('\n')}`, answers: objections.map((m) => m[1]), note: `Added ${additions.length} change(s) the reviewers asked for.` };
}

function vote(request: StandInRequest): unknown {
  const specializations = /Your specializations: ([^.]*)\./.exec(request.system)?.[1] ?? 'none declared';
  const summary = /Summary: (.*)/.exec(request.prompt)?.[1] ?? '';
  const irreversible = /cannot be undone|irreversible|no backup/i.test(summary);
  return {
    decision: irreversible ? 'deny' : 'approve',
    reasoning: irreversible ? `From ${specializations}: the action cannot be undone and the request gives no way back.` : `From ${specializations}: the request is scoped, staged and can be rolled back.`,
    confidence: irreversible ? 0.7 : 0.8,
    riskAssessment: irreversible ? 'High: an irreversible change without a backup.' : 'Moderate: contained by the staged rollout.',
  };
}

const THRESHOLD = (value: number) => ({ operation: 'set_risk_threshold', parameters: [{ name: 'threshold', value }] });
const CASCADE = { operation: 'enable_cascade_detection', parameters: [] };

function dialectic(request: StandInRequest): unknown {
  const turn = /Your turn: (thesis|antithesis|synthesis)/.exec(request.prompt)?.[1];
  if (turn === 'thesis') return { rootCause: 'An upstream latency spike made my retries pile up', conditions: [THRESHOLD(0.5), CASCADE], reasoning: 'The spike came from outside; a tighter threshold and cascade detection would have stopped me sooner.' };
  if (turn === 'antithesis') {
    return {
      observedMetrics: [{ name: 'risk_score', value: 0.65 }],
      concerns: ['The retries amplified the spike: the cause is inside the agent too', 'A threshold of 0.5 would not have tripped before the cascade'],
      reasoning: 'The spike was outside, the amplification was not: resume with a tighter threshold and cascade detection.',
      counterProposal: { rootCause: 'Unbounded retries amplified an upstream latency spike', conditions: [THRESHOLD(0.48), CASCADE] },
    };
  }
  const other = /The other party's latest position: root cause: (.*); conditions: (\[.*\])$/m.exec(request.prompt);
  const conditions = other ? (JSON.parse(other[2]!) as unknown[]) : [THRESHOLD(0.48), CASCADE];
  return { rootCause: other?.[1] ?? 'Unbounded retries amplified an upstream latency spike', conditions, reasoning: "I accept the other party's root cause and conditions.", agrees: true };
}

export function fleetStandInScript(options: { override?: (request: StandInRequest, index: number) => StandInReply | undefined } = {}): StandInScript {
  const debaters = personaModel();
  return (request, index) => {
    const overridden = options.override?.(request, index);
    if (overridden) return overridden;
    if (/constitutional reviewer/.test(request.system)) return json(request, review(request));
    if (/the executive who proposed/.test(request.system)) return json(request, revision(request));
    if (/a validator in Agora/.test(request.system)) return json(request, vote(request));
    if (/a party of a recovery/.test(request.system)) return json(request, dialectic(request));
    return debaters(request, index);
  };
}
