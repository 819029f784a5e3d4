import { eventByType, type ErrorCode } from '@agora/contracts';
import { DomainError, fold, type Command, type Decider, type DomainEvent } from './decider.js';

/**
 * Given/when/then for deciders (emmett's DeciderSpecification):
 *
 *   const spec = DeciderSpecification.for(agentDecider);
 *   spec(given).when(command).then(expectedEvents);
 *   spec(given).when(command).thenRefuses('illegal_state', /already registered/);
 *
 * Uses jest's `expect`, which is global in every spec file.
 */
export const DeciderSpecification = {
  for<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>) {
    return (given: readonly E[] = []) => ({
      when(command: C) {
        const run = () => decider.decide(command, fold(decider, given));
        return {
          then(expected: readonly E[]): void {
            expect(run()).toEqual(expected);
          },
          /** Passes the produced events to `check` for assertions that are not a plain equality. */
          thenEvents(check: (events: E[]) => void): void {
            check(run());
          },
          thenNothing(): void {
            expect(run()).toEqual([]);
          },
          thenRefuses(code: ErrorCode, message?: RegExp): DomainError {
            let error: unknown;
            try {
              run();
            } catch (e) {
              error = e;
            }
            expect(error).toBeInstanceOf(DomainError);
            const refusal = error as DomainError;
            expect(refusal.code).toBe(code);
            if (message) expect(refusal.message).toMatch(message);
            return refusal;
          },
        };
      },
    });
  },
};

/**
 * Checks an event a decider produced against its contract: its type is in the catalog, of streams of
 * `category`, its data parses with the event's schema, and it is plain JSON (no `undefined` anywhere).
 */
export function expectConformingEvent(event: DomainEvent, category: string): void {
  const definition = eventByType(event.type);
  expect(definition?.category).toBe(category);
  definition!.data.parse(event.data);
  expect(JSON.parse(JSON.stringify(event.data))).toEqual(event.data);
}

/**
 * Plays scenarios through a decider: `play(history, ...commands)` runs the commands in order on
 * top of `history` and returns the history with the events they produced appended, each checked
 * against its contract; `stateOf(history)` folds it.
 */
export function scenarioOf<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>, category: string) {
  return {
    play(history: readonly E[], ...commands: C[]): E[] {
      const events = [...history];
      for (const command of commands) {
        const produced = decider.decide(command, fold(decider, events));
        for (const event of produced) expectConformingEvent(event, category);
        events.push(...produced);
      }
      return events;
    },
    stateOf: (history: readonly E[]): S => fold(decider, history),
    conforms: (event: E): void => expectConformingEvent(event, category),
  };
}
