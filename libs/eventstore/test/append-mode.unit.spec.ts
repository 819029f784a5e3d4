import { chooseAppendMode } from '../src/jetstream/append-mode.js';

const R3 = { num_replicas: 3, storage: 'file', allow_atomic: true };
const R1 = { num_replicas: 1, storage: 'file', allow_atomic: true };

describe('how the JetStream store writes a command (one atomic batch or two appends)', () => {
  it('by default batches on a replicated stream and says why', () => {
    const mode = chooseAppendMode('auto', '2.15.1', R3);
    expect(mode.atomic).toBe(true);
    expect(mode.reason).toMatch(/^one atomic batch per command .*3 replicas, file storage, where the server stages batches in memory \(atomic=auto\)/);
  });
  it('by default keeps two appends on a single-replica file stream, saying the server stages batches on disk', () => {
    const mode = chooseAppendMode('auto', '2.15.1', R1);
    expect(mode.atomic).toBe(false);
    expect(mode.reason).toMatch(/^two appends per command .*1 replica, file storage, where the server stages each batch on disk/);
    // A single replica in memory stages in memory too.
    expect(chooseAppendMode('auto', '2.15.1', { ...R1, storage: 'memory' }).atomic).toBe(true);
  });
  it('keeps two appends on a server without atomic batches, or a stream that does not allow them, whatever was asked', () => {
    expect(chooseAppendMode('auto', '2.11.4', R3)).toMatchObject({ atomic: false, reason: expect.stringMatching(/nats-server 2\.11\.4 has no atomic batches \(2\.12\.0\+\)/) });
    expect(chooseAppendMode(true, undefined, R3).atomic).toBe(false);
    expect(chooseAppendMode('auto', '2.15.1', { ...R3, allow_atomic: false })).toMatchObject({ atomic: false, reason: expect.stringMatching(/does not allow atomic batches/) });
  });
  it('follows atomic=on and atomic=off', () => {
    expect(chooseAppendMode(true, '2.15.1', R1)).toMatchObject({ atomic: true, reason: expect.stringMatching(/asked for \(atomic=on; 1 replica/) });
    expect(chooseAppendMode(false, '2.15.1', R3)).toMatchObject({ atomic: false, reason: expect.stringMatching(/asked for \(atomic=off\)/) });
  });
});
