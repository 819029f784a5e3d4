/**
 * The audit of a recovery from its events alone (seed 001: "100 % transcript auditability";
 * docs/decisions/0004-every-command-is-signed.md: auditors replay streams to rebuild and re-verify any decision). Replays the session
 * and checks, at every step, what the decider claimed:
 * - each draw (reviewer, tie-breaker, auditor) is the seeded draw of its purpose, and the agent
 *   drawn is the one the recorded pool and draw give, never the paused agent or a party;
 * - each proposed resolution is the convergence of the transcript at that point, within the hard
 *   limits of the session's rules; each blocked one does break them;
 * - each signature verifies the resolution under the key it names (and, given the registry's key
 *   history, that key was the signer's), and a resolution carries the signatures its decider
 *   requires: both parties (dialectic), the tie-breaker, the operator, or an approved quorum;
 * - the audit sample is the seeded draw under the session's audit rate.
 */
import { canonicalJson } from '@agora/identity';
import { checkHardLimits, riskThresholdOf } from './conditions.js';
import { converged } from './convergence.js';
import { drawOf } from '@agora/domain-common';
import { auditSample } from './audit-sample.js';
import { resolutionDigest, resolutionPayload, verifyResolutionSignature, type ResolutionPayload } from './resolution.js';
import { pickFromPool } from './selection.js';
import { evolveSession, type DialecticEvent, type DialecticSession, type DialecticSessionState } from './session.js';

export interface AuditFinding {
  /** Index of the event in the stream. */
  index: number;
  type: string;
  problem: string;
}

export interface SessionAudit {
  ok: boolean;
  findings: AuditFinding[];
  /** The session as the events fold it; undefined for a stream without RecoveryOpened. */
  session: DialecticSession | undefined;
}

export interface AuditOptions {
  /** Every key each agent has had (from the registry's AgentRegistered and AgentKeyRotated events); unchecked when absent. */
  knownKeys?: ReadonlyMap<string, readonly string[]>;
}

type SelectionLike = { seed: number; draw: number; pool: { agentId: string; authority: number }[] };

export function auditSession(events: readonly DialecticEvent[], options: AuditOptions = {}): SessionAudit {
  const findings: AuditFinding[] = [];
  let state: DialecticSessionState = { status: 'unopened' };

  events.forEach((e, index) => {
    const problem = (text: string) => findings.push({ index, type: e.type, problem: text });
    const s = state.status === 'unopened' ? undefined : state;
    const checkDraw = (selection: SelectionLike, purpose: string, selected: string, parties: readonly (string | null)[]) => {
      if (s && selection.seed !== s.seed) problem(`the ${purpose} draw used seed ${selection.seed}, not the session's ${s.seed}`);
      if (selection.draw !== drawOf(selection.seed, purpose)) problem(`the ${purpose} draw ${selection.draw} is not the seeded draw ${drawOf(selection.seed, purpose)}`);
      const expected = pickFromPool(selection.pool, selection.draw);
      if (expected !== selected) problem(`${selected} was drawn, but the recorded pool and draw give ${expected ?? 'nobody'}`);
      if (parties.includes(selected)) problem(`${selected} is already a party of the session and may not be drawn as ${purpose}`);
    };
    const checkKey = (signer: string, publicKey: string) => {
      const keys = options.knownKeys?.get(signer);
      if (options.knownKeys && !keys?.includes(publicKey)) problem(`${publicKey} was never a registered key of ${signer}`);
    };
    const checkSignature = (payload: ResolutionPayload, sig: { signer: string; publicKey: string; signature: string }) => {
      if (!verifyResolutionSignature(payload, sig)) problem(`the signature of ${sig.signer} does not verify the resolution`);
      checkKey(sig.signer, sig.publicKey);
    };

    if (e.type !== 'RecoveryOpened' && !s) problem('an event before RecoveryOpened');
    if (s) {
      switch (e.type) {
        case 'ReviewerSelected':
          checkDraw(e.data.selection, 'reviewer', e.data.reviewer, [s.agentId]);
          break;
        case 'TieBreakerSelected':
          checkDraw(e.data.selection, `tie_breaker:${e.data.escalation}`, e.data.tieBreaker, [s.agentId, s.reviewer]);
          break;
        case 'AuditorAssigned':
          checkDraw(e.data.selection, 'auditor', e.data.auditor, [s.agentId, s.reviewer, ...s.escalations.map((x) => x.tieBreaker), s.operatorDecision?.operator ?? null]);
          break;
        case 'ResolutionProposed': {
          const c = converged(s.messages);
          const r = e.data.resolution;
          if (!c.converged) problem(`a resolution was proposed, but the transcript has not converged (${c.reason})`);
          else {
            const expected = resolutionPayload({ sessionId: s.sessionId, agentId: s.agentId, reviewer: s.reviewer, pause: s.pause, rootCause: c.rootCause, conditions: c.conditions, decidedBy: 'dialectic' });
            if (canonicalJson(expected) !== canonicalJson(r)) problem('the proposed resolution is not what the parties converged on');
          }
          if (checkHardLimits(r.conditions, s.rules.hardLimits).length > 0) problem('the proposed resolution breaks the hard limits');
          if (e.data.digest !== resolutionDigest(r)) problem('the digest is not the sha256 of the canonical resolution');
          break;
        }
        case 'ResolutionBlocked':
          if (checkHardLimits(e.data.resolution.conditions, s.rules.hardLimits).length === 0) problem('a resolution within the hard limits was blocked');
          break;
        case 'ResolutionSigned':
          if (!s.proposed) problem('a signature without a proposed resolution');
          else checkSignature(s.proposed.payload, e.data);
          break;
        case 'RecoveryResolved': {
          const { resolution, signatures, audit } = e.data;
          for (const sig of signatures) checkSignature(resolution, sig);
          const signedBy = (signer: string | null, role: string) => signer !== null && signatures.some((x) => x.signer === signer && x.role === role);
          const escalation = s.escalations.find((x) => x.escalation === resolution.escalation);
          switch (resolution.decidedBy) {
            case 'dialectic':
              if (!signedBy(s.agentId, 'agent') || !signedBy(s.reviewer, 'reviewer')) problem('a dialectic resolution needs the signatures of both parties');
              if (!s.proposed || canonicalJson(s.proposed.payload) !== canonicalJson(resolution)) problem('the resolution is not the one proposed to the parties');
              break;
            case 'tie_break':
              if (!escalation || escalation.tieBreaker !== resolution.decider || !signedBy(resolution.decider, 'tie_breaker')) problem("a tie-break resolution needs the drawn tie-breaker's signature");
              break;
            case 'operator':
              if (!signedBy(resolution.decider, 'operator')) problem("an operator's resolution needs the operator's signature");
              break;
            case 'quorum':
              if (!escalation?.quorumResult?.approved || escalation.votingSessionId !== resolution.decider) problem('a quorum resolution needs an approved result of its voting session');
              break;
          }
          if (checkHardLimits(resolution.conditions, s.rules.hardLimits).length > 0) problem('the resolution breaks the hard limits');
          if (e.data.riskThreshold !== riskThresholdOf(resolution.conditions)) problem('the risk threshold is not the one the conditions set');
          const expectedAudit = auditSample(s.seed, s.rules.auditRate);
          if (audit.draw !== expectedAudit.draw || audit.sampled !== expectedAudit.sampled || audit.rate !== expectedAudit.rate) problem('the audit sample is not the seeded draw');
          break;
        }
      }
    }
    state = evolveSession(state, e);
  });

  const session = state.status === 'unopened' ? undefined : state;
  return { ok: findings.length === 0, findings, session };
}
