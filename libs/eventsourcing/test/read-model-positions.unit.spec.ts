import { AgoraError } from '@agora/contracts';
import { InvalidPosition } from '@agora/eventstore';
import { ReadModelPositions } from '../src/read-model-positions.js';

/** Positions as the embedded store writes them: decimal counts. */
const store = {
  comparePositions(a: string, b: string): number {
    for (const p of [a, b]) if (!/^[1-9][0-9]*$/.test(p)) throw new InvalidPosition(p);
    return Number(a) - Number(b);
  },
};

class Model {
  position: string | undefined;
  constructor(
    readonly name: string,
    position?: string,
  ) {
    this.position = position;
  }
}

async function refusal(promise: Promise<unknown>): Promise<AgoraError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgoraError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('ReadModelPositions', () => {
  it('answers at once when every read model has reached the position, or when there is none', async () => {
    const positions = new ReadModelPositions(store, 1_000);
    await positions.waitFor('5');
    positions.track(new Model('a', '7'));
    positions.track(new Model('b', '5'));
    const started = Date.now();
    await positions.waitFor('5');
    expect(Date.now() - started).toBeLessThan(50);
  });

  it('waits until the lagging model takes the position in, woken by advanced()', async () => {
    const positions = new ReadModelPositions(store, 2_000);
    const slow = new Model('slow', '3');
    positions.track(new Model('fast', '9'));
    positions.track(slow);
    let done = false;
    const waiting = positions.waitFor('8').then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    slow.position = '7';
    positions.advanced();
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    slow.position = '8';
    positions.advanced();
    await waiting;
    expect(done).toBe(true);
  });

  it('refuses with read_model_behind after the bounded wait, naming how far the model has got', async () => {
    const positions = new ReadModelPositions(store, 150);
    positions.track(new Model('directory', '4'));
    const empty = new Model('empty');
    const started = Date.now();
    const behind = await refusal(positions.waitFor('6'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(behind).toMatchObject({ code: 'read_model_behind', details: { minPosition: '6', position: '4' } });
    expect(behind.message).toContain('directory');
    positions.track(empty);
    const none = await refusal(positions.waitFor('1'));
    expect(none).toMatchObject({ code: 'read_model_behind', details: { minPosition: '1', position: null } });
  });

  it('stops counting a model once it is untracked (a stopped projection)', async () => {
    const positions = new ReadModelPositions(store, 5_000);
    positions.track(new Model('live', '9'));
    const untrack = positions.track(new Model('stopped', '2'));
    const waiting = positions.waitFor('9');
    untrack();
    await waiting;
  });

  it('refuses at once what is not a position of the log', async () => {
    const positions = new ReadModelPositions(store, 1_000);
    positions.track(new Model('a', '1'));
    expect(await refusal(positions.waitFor('yesterday'))).toMatchObject({ code: 'invalid_command', details: { minPosition: 'yesterday' } });
    expect(await refusal(positions.waitFor(42))).toMatchObject({ code: 'invalid_command', details: { minPosition: 42 } });
  });

  it('reached() waits for the models named only (a command waits for its own service\'s), and says false after the wait instead of refusing', async () => {
    const positions = new ReadModelPositions(store, 200);
    const own = new Model('own', '3');
    positions.track(own);
    positions.track(new Model('elsewhere', '1'));
    const waiting = positions.reached('6', [own]);
    await new Promise((r) => setTimeout(r, 30));
    own.position = '6';
    positions.advanced();
    expect(await waiting).toBe(true);
    // The other model, still at 1, never reaches 6: false once the 200 ms are over.
    const started = Date.now();
    expect(await positions.reached('6', [new Model('stuck', '1')])).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});
