/** The audit's comparison of a decision made again with the one in the log. */
import { decisionDifference } from '../src/audit/engine.js';

describe('decisionDifference', () => {
  const locked = { debateId: 'd', threadId: 'main', seq: 19, at: '2026-11-24T09:52:17.327Z', attempt: 3, question: 'Will it hold?', committed: ['saylor', 'hayes'], falsifierIds: ['main.f18', 'main.f19'] };

  it('agrees on the same data whatever the order of its keys', () => {
    expect(decisionDifference('CruxLocked', { ...locked }, Object.fromEntries(Object.entries(locked).reverse()))).toBeUndefined();
  });

  it('accepts an optional field a later release sets when the event in the log satisfies its contract without it', () => {
    const again = { ...locked, commitments: [{ agentId: 'saylor', side: 'YES' }] };
    expect(decisionDifference('CruxLocked', again, locked)).toBeUndefined();
  });

  it('names the first field that differs, nested or missing', () => {
    expect(decisionDifference('CruxLocked', { ...locked, attempt: 2 }, locked)).toBe('data.attempt: 2 decided again, 3 in the log');
    expect(decisionDifference('CruxLocked', { ...locked, committed: ['saylor'] }, locked)).toBe('data.committed: 1 items decided again, 2 in the log');
    const { question: _dropped, ...withoutQuestion } = locked;
    expect(decisionDifference('CruxLocked', locked, withoutQuestion)).toBe('data.question: "Will it hold?" decided again, undefined in the log');
    expect(decisionDifference('DebateOpened', { settings: { cruxLock: { min: 8, max: 10 } } }, { settings: { cruxLock: { min: 6, max: 8 } } })).toBe('data.settings.cruxLock.min: 8 decided again, 6 in the log');
  });

  it('is strict about a field the log lacks when the event in the log does not satisfy its contract', () => {
    expect(decisionDifference('NoSuchEvent', { a: 1, b: 2 }, { a: 1 })).toBe('data.b: 2 decided again, undefined in the log');
  });
});
