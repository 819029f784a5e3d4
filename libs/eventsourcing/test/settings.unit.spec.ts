import { expectConformingEvent, DeciderSpecification } from '@agora/decider';
import { foldSettings, NO_SETTINGS, settingsDecider, settingsDigest, type SettingsCommand, type SettingsEvent } from '../src/settings.js';

const spec = DeciderSpecification.for(settingsDecider);
const NOW = '2026-11-27T10:00:00.000Z';
const record = (settings: Record<string, unknown>, actor = 'service:proposal'): SettingsCommand => ({
  type: 'RecordSettings',
  payload: { name: 'tribunal', settings },
  context: { now: NOW, actor, actorRoles: ['service'], commandId: 'c1' },
});
const recorded = (settings: Record<string, unknown>): SettingsEvent => ({ type: 'SettingsRecorded', data: { name: 'tribunal', settings, recordedAt: NOW } });

describe('the settings streams', () => {
  it('records a first value, and a changed one', () => {
    spec([]).when(record({ minRoundDeadlineMs: 1000 })).thenEvents(([event, ...rest]) => {
      expect(rest).toEqual([]);
      expect(event).toEqual(recorded({ minRoundDeadlineMs: 1000 }));
      expectConformingEvent(event!, 'settings');
    });
    spec([recorded({ minRoundDeadlineMs: 1000 })]).when(record({ minRoundDeadlineMs: 2000 })).then([recorded({ minRoundDeadlineMs: 2000 })]);
  });

  it('records nothing for the value in force, whatever the order of its keys', () => {
    spec([recorded({ a: 1, b: { c: 2, d: 3 } })]).when(record({ b: { d: 3, c: 2 }, a: 1 })).thenNothing();
  });

  it('is recorded by the service that reads the setting alone', () => {
    spec([]).when(record({}, 'service:dialectic')).thenRefuses('forbidden', /the tribunal settings are recorded by service:proposal alone, not service:dialectic/);
    spec([]).when(record({}, 'root')).thenRefuses('forbidden');
  });

  it('folds into the settings in force by name, leaving other events alone', () => {
    const event = { streamId: 'settings-tribunal', type: 'SettingsRecorded', data: recorded({ x: 1 }).data, position: '7' };
    const inForce = foldSettings(NO_SETTINGS, event);
    expect(inForce).toEqual({ tribunal: { settings: { x: 1 }, digest: settingsDigest({ x: 1 }), position: '7' } });
    expect(foldSettings(inForce, { streamId: 'proposal-p1', type: 'ProposalSubmitted', data: {}, position: '8' })).toBe(inForce);
    expect(settingsDigest({ x: 1 })).toMatch(/^[0-9a-f]{16}$/);
  });
});
