import type { ErrorCode } from '@agora/contracts';
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
