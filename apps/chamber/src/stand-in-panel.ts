/**
 * Scripts for the provider stand-ins that play a chamber panel (tests and the demo): they read
 * the prompt the chamber sent, as a real model would, and answer in the structured form asked.
 * Which phase a request belongs to is read off the prompt (the chamber's own templates).
 */
import type { StandInReply, StandInRequest, StandInScript } from '@agora/providers';

export type ChamberPhase = 'blind' | 'cross_exam' | 'arbiter';

export function phaseOf(request: StandInRequest): ChamberPhase {
  if (request.prompt.includes("THE PANEL'S FINAL ANSWERS")) return 'arbiter';
  if (request.prompt.includes("THE OTHER PANELISTS' ANSWERS")) return 'cross_exam';
  return 'blind';
}

/** The answers an arbiter or cross-examination prompt shows: label and position. */
export function answersIn(prompt: string): { label: string; position: string }[] {
  return [...prompt.matchAll(/ANSWER ([A-J])\nPosition: (.*)/g)].map((m) => ({ label: m[1]!, position: m[2]! }));
}

export function panelAnswer(position: string, claims: string[] = [], confidence = 0.75) {
  return { position, confidence, keyClaims: claims, evidence: [`evidence for: ${position}`], reasoning: `Reasoning towards "${position}".` };
}

/** An arbiter that finds consensus on the most common position shown (resting on the answers holding it), or none when no position holds a majority. */
export function arbiterVerdict(prompt: string, forceConsensus = false) {
  const shown = answersIn(prompt);
  const counts = new Map<string, string[]>();
  for (const a of shown) counts.set(a.position.toLowerCase(), [...(counts.get(a.position.toLowerCase()) ?? []), a.label]);
  const [position, labels] = [...counts.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ['', []];
  const majority = labels.length * 2 > shown.length;
  if (!majority && !forceConsensus) {
    return { verdict: 'no_consensus', position: '', synthesis: 'The answers disagree on the position; founder review recommended.', restsOn: [], reasoning: 'No position is held by a majority with comparable evidence.', selfCheck: { leanedOn: null, why: 'none stood out' } };
  }
  return {
    verdict: 'consensus',
    position,
    synthesis: `The panel converges: ${position}.`,
    restsOn: labels,
    reasoning: 'The answers holding this position give the most specific evidence.',
    selfCheck: { leanedOn: labels[0] ?? null, why: 'its evidence was the most specific' },
  };
}

export interface PanelScript {
  /** Blind positions by provider kind (openai, anthropic, google, ...). */
  blind: Record<string, string>;
  /** Positions after cross-examination by provider kind (default: keep the blind one). */
  cross?: Record<string, string>;
  /** Claims by provider kind (the same in both phases). */
  claims?: Record<string, string[]>;
  /** The arbiter claims consensus even without a majority (a forced synthesis). */
  forceConsensus?: boolean;
  /** Replace a reply: errors, delays. Return undefined to answer as scripted. */
  override?: (request: StandInRequest, phase: ChamberPhase) => StandInReply | undefined;
  /** Delay of every answer, ms. */
  delayMs?: number;
}

/** One script for every stand-in of the panel: a provider answers as its kind's part says. */
export function panelScript(script: PanelScript): StandInScript {
  return (request) => {
    const phase = phaseOf(request);
    const override = script.override?.(request, phase);
    if (override) return override;
    const delay = script.delayMs ? { delayMs: script.delayMs } : {};
    const kind = request.kind === 'openai-compatible' ? 'openai' : request.kind;
    if (phase === 'arbiter') return { json: arbiterVerdict(request.prompt, script.forceConsensus), ...delay };
    const blind = script.blind[kind] ?? 'no answer';
    const claims = script.claims?.[kind] ?? [];
    if (phase === 'blind') return { json: panelAnswer(blind, claims), ...delay };
    const after = script.cross?.[kind] ?? blind;
    const revised = after.toLowerCase() !== blind.toLowerCase();
    const influencedBy = revised ? (answersIn(request.prompt).find((a) => a.position.toLowerCase() === after.toLowerCase())?.label ?? null) : null;
    return { json: { ...panelAnswer(after, claims), revised, influencedBy }, ...delay };
  };
}
