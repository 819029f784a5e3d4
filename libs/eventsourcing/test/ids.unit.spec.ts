import { deadlineCommandId, eventIdFor, streamFilter } from '../src/index.js';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('eventIdFor', () => {
  const commandId = '0b8e8f0e-2f7e-4c1b-9a55-3f1a4c2d7e90';

  it('is a version 5 UUID, the same on every call', () => {
    expect(eventIdFor(commandId, 0)).toMatch(UUID_V5);
    expect(eventIdFor(commandId, 0)).toBe(eventIdFor(commandId, 0));
  });
  it('differs by index and by command', () => {
    const ids = new Set([eventIdFor(commandId, 0), eventIdFor(commandId, 1), eventIdFor(commandId, 2), eventIdFor('another-command', 0)]);
    expect(ids.size).toBe(4);
  });
  it('refuses a bad index or an empty command id', () => {
    expect(() => eventIdFor(commandId, -1)).toThrow(RangeError);
    expect(() => eventIdFor(commandId, 1.5)).toThrow(RangeError);
    expect(() => eventIdFor('', 0)).toThrow(TypeError);
  });
});

describe('deadlineCommandId', () => {
  it('is the same for the same deadline, different for another due time or key', () => {
    const a = deadlineCommandId('vote-1', '2030-01-01T00:00:00.000Z');
    expect(a).toMatch(UUID_V5);
    expect(deadlineCommandId('vote-1', '2030-01-01T00:00:00.000Z')).toBe(a);
    expect(deadlineCommandId('vote-1', '2030-01-01T00:00:01.000Z')).not.toBe(a);
    expect(deadlineCommandId('vote-2', '2030-01-01T00:00:00.000Z')).not.toBe(a);
  });
});

describe('categories', () => {
  it('filters by category, or lets everything through when none are given', () => {
    const only = streamFilter(['vote', 'debate']);
    expect(only('vote-1')).toBe(true);
    expect(only('voter-1')).toBe(false);
    expect(only('debate-x-y')).toBe(true);
    expect(streamFilter(undefined)('anything-1')).toBe(true);
  });
});
