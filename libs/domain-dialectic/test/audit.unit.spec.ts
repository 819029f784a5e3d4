import { auditSession } from '../src/audit.js';
import { resolutionPayload } from '../src/resolution.js';
import type { DialecticEvent } from '../src/session.js';
import { AGENT, assignTieBreaker, at, converging, deadlocked, decideRecovery, escalate, example, inSynthesis, keysOf, play, proposedPayload, quorumResult, REVIEWER, sign, signed, SID, threshold, tieBreak } from './fixtures.js';

const resolved = (): DialecticEvent[] => {
  const h = converging();
  const payload = proposedPayload(h);
  return play(h, sign(AGENT, payload, at(200)), sign(REVIEWER, payload, at(230)));
};
const replace = (events: DialecticEvent[], type: DialecticEvent['type'], change: (data: never) => unknown): DialecticEvent[] => {
  const i = events.findLastIndex((e) => e.type === type);
  return events.map((e, j) => (j === i ? ({ ...e, data: change(e.data as never) } as DialecticEvent) : e));
};
const problems = (events: DialecticEvent[], options?: Parameters<typeof auditSession>[1]) => auditSession(events, options).findings.map((f) => `${f.type}: ${f.problem}`);

describe('auditSession: re-verifying a recovery from its events alone', () => {
  it('passes the dialectic path: the draw, the convergence, both signatures, the audit sample', () => {
    const audit = auditSession(resolved(), { knownKeys: new Map([[AGENT, [keysOf(AGENT).publicKey]], [REVIEWER, ['ed25519:old', keysOf(REVIEWER).publicKey]]]) });
    expect(audit).toMatchObject({ ok: true, findings: [], session: { status: 'resolved' } });
  });

  it('passes the tie-break, quorum and operator paths', () => {
    const tie = play(deadlocked(), assignTieBreaker(1, at(430)));
    const side = resolutionPayload({ sessionId: SID, agentId: AGENT, reviewer: REVIEWER, pause: 1, rootCause: example.synthesis.rootCause, conditions: [threshold(0.45)], decidedBy: 'tie_break', escalation: 1, decider: 'sage' });
    expect(problems(play(tie, tieBreak(1, 'reviewer', at(500), side)))).toEqual([]);
    expect(problems(play(tie, tieBreak(1, 'neither', at(500)), quorumResult(2, 'approve', at(800))))).toEqual([]);
    const op = resolutionPayload({ sessionId: SID, agentId: AGENT, reviewer: REVIEWER, pause: 1, rootCause: 'spike', conditions: [], decidedBy: 'operator', escalation: 1, decider: 'root' });
    expect(problems(play(inSynthesis(), escalate('root', at(150), true), decideRecovery('resume', at(300), op)))).toEqual([]);
  });

  it('finds a reviewer that the recorded pool and draw do not give', () => {
    const forged = replace(resolved(), 'ReviewerSelected', (d: { reviewer: string }) => ({ ...d, reviewer: 'sage' }));
    expect(problems(forged)).toContain('ReviewerSelected: sage was drawn, but the recorded pool and draw give reviewer_b');
    const redrawn = replace(resolved(), 'ReviewerSelected', (d: { selection: { draw: number } }) => ({ ...d, selection: { ...d.selection, draw: 0.5 } }));
    expect(problems(redrawn)[0]).toMatch(/the reviewer draw 0.5 is not the seeded draw/);
  });

  it('finds a forged signature, a missing one, and a key the signer never had', () => {
    const reviewerSignature = signed(proposedPayload(converging()), REVIEWER);
    const forged = replace(resolved(), 'ResolutionSigned', (d: object) => ({ ...d, signer: AGENT, signature: reviewerSignature.signature, publicKey: keysOf(AGENT).publicKey }));
    expect(problems(forged)).toContain('ResolutionSigned: the signature of critical_agent does not verify the resolution');
    const oneSignature = replace(resolved(), 'RecoveryResolved', (d: { signatures: unknown[] }) => ({ ...d, signatures: d.signatures.slice(0, 1) }));
    expect(problems(oneSignature)).toEqual(['RecoveryResolved: a dialectic resolution needs the signatures of both parties']);
    expect(problems(resolved(), { knownKeys: new Map([[AGENT, [keysOf(AGENT).publicKey]]]) })).toContain(`ResolutionSigned: ${keysOf(REVIEWER).publicKey} was never a registered key of reviewer_b`);
  });

  it('finds a resolution that is not what the parties converged on, or that breaks the hard limits', () => {
    const swapped = replace(resolved(), 'ResolutionProposed', (d: { resolution: object }) => ({ ...d, resolution: { ...d.resolution, conditions: [threshold(0.95)] } }));
    expect(problems(swapped)).toEqual(
      expect.arrayContaining([
        'ResolutionProposed: the proposed resolution is not what the parties converged on',
        'ResolutionProposed: the proposed resolution breaks the hard limits',
        'ResolutionProposed: the digest is not the sha256 of the canonical resolution',
      ]),
    );
  });

  it('finds an audit sample that is not the seeded draw', () => {
    const skipped = replace(resolved(), 'RecoveryResolved', (d: { audit: object }) => ({ ...d, audit: { rate: 0.1, draw: 0.99, sampled: false } }));
    expect(problems(skipped)).toEqual(['RecoveryResolved: the audit sample is not the seeded draw']);
  });
});
