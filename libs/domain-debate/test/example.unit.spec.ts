/** The seed's test debate ("Bitcoin is digital gold", Saylor against Hayes), scripted, through the decider: every stage, every gate, the final ThreadCrux. */
import { moderatorMovesFor } from '../src/moderator.js';
import { exampleScript, moveOf } from '../src/example.js';
import { firstTimeAccurate } from '../src/steelman.js';
import { debateFigures } from '../src/stats.js';
import { moderate, move, ofType, open, play, playExample, stateOf, thread } from './fixtures.js';

describe('the seed\'s test debate, scripted', () => {
  it('goes DISCOVERY -> CRUX_LOCK -> EVIDENCE -> CONVERGED with a validated crux', () => {
    const h = playExample();
    expect(exampleScript()).toHaveLength(28);
    expect(ofType(h, 'DebateStageAdvanced').map((e) => [e.data.from, e.data.to, e.data.seq])).toEqual([
      ['DISCOVERY', 'CRUX_LOCK', 6],
      ['CRUX_LOCK', 'EVIDENCE', 16],
      ['EVIDENCE', 'CONVERGED', 28],
    ]);
    expect(ofType(h, 'CruxLockAttempted').map((e) => [e.data.attempt, e.data.passed, e.data.failed])).toEqual([
      [1, false, ['falsifiers_declared']],
      [2, true, []],
    ]);
    const t = thread(h);
    expect(t.concessions).toEqual([expect.objectContaining({ agentId: 'saylor', topClaimChanged: false })]); // the cheap concession
    expect(firstTimeAccurate(t.steelmans)).toEqual({ graded: 2, accurate: 1, rate: 0.5 });
    const done = ofType(h, 'DebateCompleted')[0]!.data;
    expect(done).toMatchObject({ outcome: 'converged', primaryThreadId: 'main', lockAttempts: 2, dcg: [{ threadId: 'main', score: 1 }] });
    expect(done.crux).toMatchObject({
      question: 'Will Bitcoin hold its value when equities crash, behaving like a hedge rather than a risk asset?',
      positions: { saylor: { side: 'YES', confidence: 0.85 }, hayes: { side: 'NO', confidence: 0.75 } },
      counterfactual: { saylor: { flipsIfCruxFlips: true }, hayes: { flipsIfCruxFlips: true } },
      validated: true,
    });
    expect(done.crux!.falsifiers.map((f) => f.threshold)).toEqual(['> 50 %', '< 0.2 correlation']);
    expect(done.crux!.resolutionCriteria).toHaveLength(2);
  });

  it('with the moderator answering every event as the service does, it still converges, and the figures count the interventions', () => {
    let h = play([], open());
    for (const step of exampleScript()) {
      const before = h.length;
      h = play(h, move(step.agentId, moveOf(step, stateOf(h))));
      for (const e of h.slice(before)) for (const { threadId, move: m } of moderatorMovesFor(e)) h = play(h, moderate(m, threadId));
    }
    expect(thread(h).interventions.map((i) => i.kind)).toEqual(['lock_prompt']);
    expect(thread(h).stage).toBe('CONVERGED');
    const figures = debateFigures([stateOf(h)]);
    expect(figures).toMatchObject({ open: 0, byOutcome: { converged: 1, unvalidated: 0, unresolved: 0 }, lockAttempts: { passed: 1, failed: 1 }, concessions: { total: 1, cheap: 1 } });
    expect(figures.interventions).toEqual({ lock_prompt: 1, forced_binary: 0, proposed_falsifiers: 0, orbiting: 0, horizon_mismatch: 0 });
    expect(figures.steelmans).toEqual({ firstGraded: 2, firstAccurate: 1, firstAccurateRate: 0.5 });
    expect(figures.completed.debates).toBe(1);
    expect([...figures.completed.durationSeconds.buckets.values()]).toEqual([1]);
  });
});
