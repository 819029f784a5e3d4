import { aggregateDeadlineKey, deadlineRule, DomainError, requireRole, round6, timeAfter, type CommandContext } from '../src/index.js';

const context = (roles: string[]): CommandContext => ({ now: '2026-01-01T00:00:00.000Z', actor: 'ada', actorRoles: roles, commandId: 'c1' });

describe('requireRole', () => {
  it('passes an actor holding one of the roles, and refuses another naming the roles as the command gate does', () => {
    expect(() => requireRole(context(['validator']), ['executive', 'validator'], 'vote')).not.toThrow();
    expect(() => requireRole(context(['operator']), 'operator', 'decide')).not.toThrow();
    let refusal: unknown;
    try {
      requireRole(context(['observer']), 'executive', 'submit a proposal');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'forbidden', message: 'ada may not submit a proposal: that needs the role executive, and ada has observer', details: { actor: 'ada', requiredRoles: ['executive'], actorRoles: ['observer'] } });
    expect(() => requireRole(context([]), ['executive', 'operator'], 'cancel')).toThrow('that needs the role executive or operator, and ada has none');
  });
});

describe('timeAfter and round6', () => {
  it('adds milliseconds to the command time, and refuses a time that is not one', () => {
    expect(timeAfter('2026-01-01T00:00:00Z', 90_000)).toBe('2026-01-01T00:01:30.000Z');
    expect(() => timeAfter('soon', 1)).toThrow(expect.objectContaining({ code: 'invalid_command' }));
  });
  it('rounds to six decimals', () => {
    expect(round6(0.1 + 0.2)).toBe(0.3);
    expect(round6(2 / 3)).toBe(0.666667);
  });
});

describe('deadlines', () => {
  const key = aggregateDeadlineKey('thing', 'timeout');
  const deadlineOf = deadlineRule({ sets: ['Opened', 'Moved'], cancels: ['Closed'], cancelOnNull: ['Moved'], keyOf: ({ id }) => (typeof id === 'string' ? key.key(id) : undefined) });
  const event = (type: string, data: unknown) => ({ type, data, streamId: 'thing-a' });

  it('builds and parses the key of an aggregate deadline', () => {
    expect(key.key('a-1')).toBe('thing-a-1:timeout');
    expect(key.parse('thing-a-1:timeout')).toBe('a-1');
    expect(key.parse('other-a-1:timeout')).toBeUndefined();
    expect(key.parse('thing-a-1:deadline')).toBeUndefined();
  });
  it('sets, moves and cancels under the key the event names, and ignores the rest', () => {
    expect(deadlineOf(event('Opened', { id: 'a', deadlineAt: 'T1' }))).toEqual({ key: 'thing-a:timeout', dueAt: 'T1' });
    expect(deadlineOf(event('Closed', { id: 'a' }))).toEqual({ cancel: 'thing-a:timeout' });
    expect(deadlineOf(event('Moved', { id: 'a', deadlineAt: null }))).toEqual({ cancel: 'thing-a:timeout' });
    expect(deadlineOf(event('Opened', { id: 'a', deadlineAt: null }))).toBeUndefined();
    expect(deadlineOf(event('Opened', { deadlineAt: 'T1' }))).toBeUndefined();
    expect(deadlineOf(event('Other', { id: 'a', deadlineAt: 'T1' }))).toBeUndefined();
    expect(deadlineOf(event('Opened', null))).toBeUndefined();
  });
});
