import { CLUSTERED_LOG_MIN_VERSION, clusteredLogRefusal, parseServerVersion } from '../src/jetstream/server-version.js';

describe('which nats-server may hold a clustered log (nats-io/nats-server#4320, #6415)', () => {
  it('reads the versions servers report', () => {
    expect(parseServerVersion('2.9.10')).toEqual([2, 9, 10]);
    expect(parseServerVersion('v2.10.4-beta.1')).toEqual([2, 10, 4]);
    expect(parseServerVersion('2.12')).toBeUndefined();
    expect(parseServerVersion(undefined)).toBeUndefined();
    expect(CLUSTERED_LOG_MIN_VERSION).toBe('2.11.0');
  });

  it('refuses more than one replica before 2.9.21 for the unserialized check, naming the defect and the fix', () => {
    for (const version of ['2.9.10', '2.9.20', '2.8.4', '1.99.99']) {
      const reason = clusteredLogRefusal(version, 3, 'AGORA_EVENTS');
      expect(reason).toContain(`nats-server ${version}`);
      expect(reason).toContain('AGORA_EVENTS has 3 replicas');
      expect(reason).toContain('nats-io/nats-server#4320');
      expect(reason).toContain('Run nats-server 2.11.0 or newer on every node');
    }
    expect(clusteredLogRefusal('2.9.20', 2, 'LOG')).toContain('LOG has 2 replicas');
  });

  it('refuses more than one replica from 2.9.21 to 2.10.x for the message id kept after a refusal, naming the defect and the fix', () => {
    for (const version of ['2.9.21', '2.9.25', '2.10.0', '2.10.27', 'v2.10.29-beta']) {
      const reason = clusteredLogRefusal(version, 3, 'AGORA_EVENTS');
      expect(reason).toContain(`nats-server ${version} keeps the message id of a publish it refused`);
      expect(reason).toContain('nats-io/nats-server#6415');
      expect(reason).not.toContain('#4320');
      expect(reason).toContain('Run nats-server 2.11.0 or newer on every node');
    }
  });

  it('accepts 2.11.0 and every later release, and a single replica on any server', () => {
    for (const version of ['2.11.0', 'v2.11.0-RC.2', '2.12.1', '2.15.1', '3.0.0']) expect(clusteredLogRefusal(version, 3, 'AGORA_EVENTS')).toBeUndefined();
    for (const version of ['2.9.10', '2.10.27', '2.2.0', undefined]) expect(clusteredLogRefusal(version, 1, 'AGORA_EVENTS')).toBeUndefined();
  });

  it('refuses more than one replica when the server does not say its version', () => {
    expect(clusteredLogRefusal(undefined, 3, 'AGORA_EVENTS')).toContain('version unknown');
    expect(clusteredLogRefusal('nightly', 3, 'AGORA_EVENTS')).toContain('nats-server nightly');
  });
});
