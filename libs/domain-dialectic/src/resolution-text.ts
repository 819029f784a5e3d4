/**
 * What a resolution signature covers, free of node:crypto so that a browser (the console, where an
 * operator signs a tier-3 decision and an auditor re-checks signatures) builds exactly the bytes
 * the dialectic service verifies. resolution.ts signs and verifies them with node:crypto.
 */
import type { Condition, DecidedBy, ResolutionPayload } from '@agora/contracts';
import { canonicalJson, domainSigningText } from '@agora/identity/browser';

/** Domain separation of resolution signatures. */
export const RESOLUTION_SIGNING_TAG = 'agora.dialectic.resolution.v1';

const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A condition with its parameters in key order (the canonical form, as objects). */
function sortedParameters(c: Condition): Condition {
  const parameters: Condition['parameters'] = {};
  for (const key of Object.keys(c.parameters).sort(codeUnitOrder)) parameters[key] = c.parameters[key]!;
  return { operation: c.operation, parameters };
}

/**
 * Conditions in canonical order: sorted by their canonical JSON, exact duplicates dropped. Two
 * parties that propose the same set in any order get the same list, and so the same signed bytes.
 */
export function canonicalConditions(conditions: readonly Condition[]): Condition[] {
  const byJson = new Map<string, Condition>();
  for (const c of conditions) byJson.set(canonicalJson(sortedParameters(c)), sortedParameters(c));
  return [...byJson.keys()].sort(codeUnitOrder).map((k) => byJson.get(k)!);
}

export interface ResolutionInput {
  sessionId: string;
  agentId: string;
  reviewer: string | null;
  pause: number;
  rootCause: string;
  conditions: readonly Condition[];
  decidedBy: DecidedBy;
  escalation?: number | null;
  decider?: string | null;
}

/** The canonical resolution payload: conditions in canonical order, every field present. */
export function resolutionPayload(input: ResolutionInput): ResolutionPayload {
  return {
    sessionId: input.sessionId,
    agentId: input.agentId,
    reviewer: input.reviewer,
    pause: input.pause,
    rootCause: input.rootCause,
    conditions: canonicalConditions(input.conditions),
    decidedBy: input.decidedBy,
    escalation: input.escalation ?? null,
    decider: input.decider ?? null,
  };
}

/** The exact text `signer` signs: the tag, a newline, then the canonical JSON of `{resolution, signer}`. */
export function resolutionSigningText(payload: ResolutionPayload, signer: string): string {
  return domainSigningText(RESOLUTION_SIGNING_TAG, { resolution: payload, signer });
}
